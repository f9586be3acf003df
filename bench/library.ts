// Preloaded into Plant Store as it ships (node --import) to put a library in place of one of
// our own pieces, for the bench's rows that set the two side by side. BENCH_LIBRARY names it:
//   otel-sdk     the OpenTelemetry SDK's tracer and exporter (sdk-tracing.ts) for src/tracing/
import { registerHooks } from 'node:module'

const SWAPS: Record<string, { parent: string, specifier: string, by: string }> = {
  'otel-sdk': { parent: '/src/observability.js', specifier: './tracing/index.js', by: './sdk-tracing.js' }
}
const name = process.env.BENCH_LIBRARY ?? ''
const swap = SWAPS[name]
if (swap === undefined) throw new Error(`BENCH_LIBRARY=${name}: not one of ${Object.keys(SWAPS).join(', ')}`)
const by = new URL(swap.by, import.meta.url).href
let swapped = false

registerHooks({
  resolve (specifier, context, next) {
    if (specifier !== swap.specifier || context.parentURL?.endsWith(swap.parent) !== true) return next(specifier, context)
    swapped = true
    return { url: by, shortCircuit: true }
  }
})
// A row whose server never loaded the library would measure our own code under the library's name.
process.once('exit', () => {
  if (!swapped) process.stderr.write(`bench: BENCH_LIBRARY=${name}: ${swap.parent} never imported ${swap.specifier}: this server ran without the library\n`)
})
