import { join } from 'node:path'
import { create, TOKEN, type Server } from './load.js'
import { otlpSink } from './otlp-sink.js'
import { runPairs, type Pair, type PairRow, type PhaseOptions, type Target } from './phase.js'
import { fmt, median } from './report.js'

const CREATE = 'POST /plants, unique ids'
// Tracing costs a few µs a request, and a shared machine moves more than that between
// two windows: the two servers of a pair are loaded at the same time, on the same core,
// and each row is the median of its rounds' ratios. Two servers that cost the same can
// still differ by a few percent for as long as they run (one pair of processes measured
// 0.96 to 0.98 in every round, two others 0.99), more than the rounds of one pair differ:
// each pair is started afresh OBSERVE_INSTANCES times, and measured in OBSERVE_ROUNDS rounds each time.
// The server of a pair started first costs more (PhaseOptions.againstFirst), so every other
// instance starts the other one first: an even count of instances balances it.
export const OBSERVE_ROUNDS = Number(process.env.BENCH_OBSERVE_ROUNDS ?? 2)
export const OBSERVE_INSTANCES = Number(process.env.BENCH_OBSERVE_INSTANCES ?? 6)
// A caller's traceparent whose flags (00) say that it did not sample the trace.
const UNSAMPLED_CALLER = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00'
const METRICS_ON = 'SQLite normal, metrics on'
// Each traced server posts its spans under a path of its own (prefix-instance).
const TRACED = { name: 'SQLite normal, metrics on, every request traced', prefix: 'traced' }
const SAMPLED = { name: 'SQLite normal, metrics on, 10% traced', prefix: 'sampled' }
const UNSAMPLED = { name: 'SQLite normal, metrics on, traced, callers that do not sample', prefix: 'unsampled' }
// The same requests, traceparent and all, to the untraced server: what the header itself
// costs (its bytes parsed, one more header) is the caller's, not tracing's.
const UNTRACED_CALLERS = 'SQLite normal, metrics on, the same callers (traceparent not sampled)'

export interface ObserveOptions {
  /** Where the SQLite files go. */
  dir: string
  phase: Omit<PhaseOptions, 'rounds'>
  /** The service's dist/src/server.js, and the baseline's (a store that keeps nothing). */
  server: string
  baseline: string
}

/** The creates a server has answered with 200 so far, from its own metrics. */
async function createsAnswered (server: Server): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text()
  return Number(/^http_request_duration_seconds_count\{method="POST",route="\/plants",status_code="200"\} (\d+)$/m.exec(text)?.[1])
}

/**
 * Metrics and tracing, each server against the same one without them, both loaded at once.
 * Metrics are on by default (METRICS=true); tracing is on with an OTLP endpoint,
 * here a collector in this process that takes every export and keeps nothing.
 * Returns the first instance's servers (for their start and RSS figures) and the section's lines.
 */
export async function measureObservability ({ dir, phase, server, baseline }: ObserveOptions): Promise<{ targets: Target[], lines: string[] }> {
  const sink = await otlpSink()
  // Each traced server posts under a path of its own, and says after each load how many creates it answered.
  const answered = new Map<string, number>()
  let file = 0
  const sqlite = (name: string, env: Record<string, string> = {}, headers?: Record<string, string>): Target =>
    ({ name, script: server, env: { DATABASE_URL: `sqlite:${join(dir, `observe-${file++}.db`)}`, ...env }, ...(headers && { headers }) })
  const tracedServer = (name: string, prefix: string, env: Record<string, string> = {}, headers?: Record<string, string>): Target => ({
    ...sqlite(name, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${sink.url}/${prefix}/v1/traces`, ...env }, headers),
    settle: async (target: Server) => { answered.set(prefix, await createsAnswered(target)) }
  })
  const untraced = () => sqlite(METRICS_ON)
  // Each pair has two servers of its own, loaded at the same time; a new pair of processes per instance.
  const pairsOf = (instance: number): Pair[] => [
    { target: { name: 'baseline, metrics on', script: baseline, env: { DATABASE_URL: 'sqlite::memory:' } }, against: { name: 'baseline, metrics off', script: baseline, env: { DATABASE_URL: 'sqlite::memory:', METRICS: 'false' } } },
    { target: sqlite(METRICS_ON), against: sqlite('SQLite normal, metrics off', { METRICS: 'false' }) },
    { target: tracedServer(TRACED.name, `${TRACED.prefix}-${instance}`), against: untraced() },
    { target: tracedServer(SAMPLED.name, `${SAMPLED.prefix}-${instance}`, { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }), against: untraced() },
    { target: tracedServer(UNSAMPLED.name, `${UNSAMPLED.prefix}-${instance}`, {}, { traceparent: UNSAMPLED_CALLER }), against: sqlite(UNTRACED_CALLERS, {}, { traceparent: UNSAMPLED_CALLER }) },
    { target: sqlite(UNTRACED_CALLERS, {}, { traceparent: UNSAMPLED_CALLER }), against: untraced() },
    // Two identical servers: how far apart the method puts two that cost the same.
    { target: sqlite(`${METRICS_ON}, a second one`), against: untraced() }
  ]
  const instances = Array.from({ length: OBSERVE_INSTANCES }, (_, instance) => pairsOf(instance))
  // Every instance's rows of each pair, by the pair's place in the list.
  const rows: PairRow[][][] = instances[0].map(() => [])
  try {
    for (const [instance, pairs] of instances.entries()) {
      const measured = await runPairs(pairs, create, { ...phase, rounds: OBSERVE_ROUNDS, againstFirst: instance % 2 === 1 })
      pairs.forEach((pair, i) => rows[i].push(measured.filter((row) => row.pair === pair)))
    }
  } finally {
    await sink.close()
  }
  const exported = sink.received()
  const lines = [
    '| request | server | against | req/s | × against | server CPU µs/req | CPU × against | CPU × against, each round | p50 ms | p99 ms | errors | non-2xx |',
    '|---|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|',
    ...instances[0].map(({ target, against }, i) => {
      const all = rows[i].flat()
      const cpu = (row: PairRow): number => row.reference.cpuUsPerRequest / row.result.cpuUsPerRequest
      return `| ${CREATE} | ${target.name} | ${against.name} | ${fmt(median(all.map(({ result }) => result.requests)))} | ` +
        `${fmt(median(all.map(({ result, reference }) => result.requests / reference.requests)), 2)} | ${fmt(median(all.map(({ result }) => result.cpuUsPerRequest)))} | ` +
        `${fmt(median(all.map(cpu)), 2)} | ${rows[i].map((instance) => instance.map((row) => fmt(cpu(row), 2)).join(', ')).join(' / ')} | ` +
        `${median(all.map(({ result }) => result.p50))} | ${median(all.map(({ result }) => result.p99))} | ` +
        `${all.reduce((sum, { result }) => sum + result.errors, 0)} | ${all.reduce((sum, { result }) => sum + result.non2xx, 0)} |`
    }),
    '', 'Request spans the collector received per create the server answered (warm-up included): ' +
      [TRACED, SAMPLED, UNSAMPLED].map(({ name, prefix }) => {
        const each = instances.map((_, instance) => `${prefix}-${instance}`)
        const spans = each.reduce((sum, path) => sum + sink.received(path).requestSpans, 0)
        return `${name.replace('SQLite normal, metrics on, ', '')} ${fmt(spans / each.reduce((sum, path) => sum + (answered.get(path) ?? NaN), 0), 3)}`
      }).join('; ') +
      ' (every request traced: 1 when none was dropped; 10%: about 0.1; callers that do not sample: 0).',
    '', 'Each pair is two servers of its own, started for its rounds and stopped after them, both on core 1, loaded at the same time from 50 connections each ' +
      `(a first window of ${phase.seconds} s unmeasured, then ${OBSERVE_ROUNDS} rounds of ${phase.seconds} s, BENCH_OBSERVE_ROUNDS), and started afresh ${OBSERVE_INSTANCES} times (BENCH_OBSERVE_INSTANCES; each round's ratio below, the instances apart by a slash); ` +
      'which load starts first flipping every round, and which server is started first flipping every instance; each cell is the median over every round of every instance (errors and non-2xx: the sum). ' +
      'The last pair is two identical servers: its spread is the method\'s own. ' +
      '× against: req/s over the other\'s; CPU × against: the other\'s server CPU per request over this row\'s (below 1 costs more: 0.80 is 25% more CPU per request); ' +
      'on a busy machine CPU per request moves less than req/s does. ' +
      'Metrics on is the default (`GET /metrics`, request counts and durations by route, store batches); off is `METRICS=false`. ' +
      'Traced: an OTLP endpoint set (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, a path of its own per server; OTLP/HTTP protobuf; a server span per sampled request, and a span per store batch that carried one, linked to each) ' +
      `to a collector in the bench process that received ${fmt(exported.exports)} exports, ${fmt(exported.bytes / 2 ** 20, 1)} MiB; ` +
      'spans beyond the exporter\'s queue (2,048) would be dropped, as in production under such load. ' +
      '10% traced: the same with `OTEL_TRACES_SAMPLER=parentbased_traceidratio OTEL_TRACES_SAMPLER_ARG=0.1`. ' +
      `Callers that do not sample: the default sampler (\`parentbased_always_on\`), every request carrying \`traceparent: ${UNSAMPLED_CALLER}\`, whose flags say that its caller did not sample it, against the untraced server sent the same requests; ` +
        'the row after it is what the header alone costs the untraced server.'
  ]
  // The first instance's servers stand for the rest in the bench's table of start times and RSS.
  return { targets: instances[0].flatMap(({ target, against }) => [target, against]), lines }
}
