// Tracing's and metrics' cost on SQLite creates: our tracer and encoder (src/tracing/) beside
// the OpenTelemetry SDK they stand for, at 10% and every request sampled (STYLE.md: a claim that
// our piece beats the library is a row anyone can rerun), and METRICS=false beside metrics on.
import { fileURLToPath, pathToFileURL } from 'node:url'
import { CREATE } from './load.js'
import { cpuRatio, figures, fmt, rateRatio, table } from './report.js'
import { nodeTarget, runRounds, type Target } from './rounds.js'
import { SAMPLINGS, type OtlpSink } from './tracing.js'

const LIBRARY = pathToFileURL(fileURLToPath(new URL('library.js', import.meta.url))).href

interface Row {
  name: string
  /** The row it is set against in its table's last columns: ours, for a library's row. */
  ours?: string
  env: (sink: string) => Record<string, string>
  /** The BENCH_LIBRARY that library.ts puts in place of our own piece. */
  library?: string
  /** Its sink path counts request spans. */
  traced?: boolean
}

const [, [, tenth], [, every]] = SAMPLINGS
const TRACING: Row[] = [
  { name: 'untraced', env: () => ({}) },
  { name: '10% sampled', env: (sink) => tenth(sink, 'own-10'), traced: true },
  { name: '10% sampled, OpenTelemetry SDK', ours: '10% sampled', env: (sink) => tenth(sink, 'sdk-10'), library: 'otel-sdk', traced: true },
  { name: 'every request sampled', env: (sink) => every(sink, 'own-all'), traced: true },
  { name: 'every request sampled, OpenTelemetry SDK', ours: 'every request sampled', env: (sink) => every(sink, 'sdk-all'), library: 'otel-sdk', traced: true }
]
const METRICS: Row[] = [
  { name: 'metrics on', env: () => ({}) },
  { name: 'METRICS=false', env: () => ({ METRICS: 'false' }) }
]

/** Both tables' lines, from one set of rounds; `database` makes each server a fresh SQLite one. */
export async function ownOrLibrary (service: string[], database: () => Promise<string>, sink: OtlpSink, rounds: number, seconds: number): Promise<string[]> {
  // The untraced server is the one with metrics on: it is measured once, under both names.
  const rows = [...TRACING, ...METRICS.slice(1)]
  const targets: Target[] = await Promise.all(rows.map(async (row) => nodeTarget(row.name,
    row.library === undefined ? service : ['--import', LIBRARY, ...service],
    { DATABASE_URL: await database(), ...row.env(sink.url), ...row.library === undefined ? {} : { BENCH_LIBRARY: row.library } })))
  const results = await runRounds(targets, [CREATE], rounds, seconds)
  const of = (name: string) => results.of(CREATE.name, name === METRICS[0].name ? TRACING[0].name : name)
  const answered = (name: string) => targets.find((t) => t.name === name)?.answered ?? NaN

  const section = (base: Row, list: Row[]): string[][] => list.map((row) => {
    const these = of(row.name)
    const ours = row.ours === undefined ? [] : of(row.ours)
    const against = [fmt(rateRatio(these, of(base.name)), 2), fmt(cpuRatio(these, of(base.name)), 2)]
    if (list === METRICS) return [row.name, ...figures(these), ...against]
    return [row.name, ...figures(these), ...against, row.ours === undefined ? '' : fmt(cpuRatio(these, ours), 2),
      row.traced === true ? fmt(spans(sink, row) / answered(row.name), 2) : '']
  })
  return [
    '', '### Tracing: POST /plants, Plant Store, SQLite', '', ...table(
      ['tracing', 'req/s', 'server CPU µs/req', 'failed', '× untraced, req/s', '× untraced, req/CPU-s', '× ours, req/CPU-s', 'request spans per create'],
      section(TRACING[0], TRACING), 1),
    '', '### Metrics: POST /plants, Plant Store, SQLite', '', ...table(
      ['metrics', 'req/s', 'server CPU µs/req', 'failed', '× metrics on, req/s', '× metrics on, req/CPU-s'],
      section(METRICS[0], METRICS), 1)
  ]
}

/** The request spans the sink received from a traced row's server, under the path its env gave it. */
function spans (sink: OtlpSink, row: Row): number {
  const url = row.env(sink.url).OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? ''
  return sink.spans(url.slice(sink.url.length).split('/')[1])
}
