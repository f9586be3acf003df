// Loaded with --import in every test process and every server a test starts (tap's
// node-arg): TypeScript runs on Node's own type stripping, with no compiler per process.
// `./x.js` resolves to x.ts as tsc's NodeNext resolution does; a file with syntax that
// stripping refuses (parameter properties) is transformed instead, with a source map.
import { existsSync, readFileSync } from 'node:fs'
import { registerHooks, stripTypeScriptTypes } from 'node:module'
import { fileURLToPath } from 'node:url'

const TS = /\.[cm]?ts$/

function toTypeScript (specifier, parentURL) {
  if (parentURL === undefined || !TS.test(parentURL) || !/^\.\.?\//.test(specifier) || !specifier.endsWith('js')) return undefined
  const url = new URL(specifier.replace(/js$/, 'ts'), parentURL)
  return existsSync(url) ? url.href : undefined
}

function compile (source, url) {
  try {
    return stripTypeScriptTypes(source)
  } catch (error) {
    if (error.code !== 'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX') throw error
    return stripTypeScriptTypes(source, { mode: 'transform', sourceMap: true, sourceUrl: fileURLToPath(url) })
  }
}

// The function's one-time "experimental" warning would reach the stderr that tests read.
const emitWarning = process.emitWarning
process.emitWarning = () => {}
try {
  stripTypeScriptTypes('')
} finally {
  process.emitWarning = emitWarning
}

registerHooks({
  resolve (specifier, context, next) {
    return next(toTypeScript(specifier, context.parentURL) ?? specifier, context)
  },
  load (url, context, next) {
    if (!url.startsWith('file:') || !/\.m?ts$/.test(url)) return next(url, context)
    const source = compile(readFileSync(new URL(url), 'utf8'), url)
    return { format: 'module', source, shortCircuit: true }
  }
})
