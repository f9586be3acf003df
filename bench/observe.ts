import { join } from 'node:path'
import { create, TOKEN, type Server } from './load.js'
import { otlpSink } from './otlp-sink.js'
import { find, runPhase, type PhaseOptions, type Row, type Target } from './phase.js'
import { fmt, median } from './report.js'

const CREATE = 'POST /plants, unique ids'
// Tracing costs a few µs a request, and a shared machine moves more than that between
// two windows: every pair is measured over several rounds, the order flipping every round,
// and each row is the median of its rounds' ratios.
export const OBSERVE_ROUNDS = Number(process.env.BENCH_OBSERVE_ROUNDS ?? 6)
// A caller's traceparent whose flags (00) say that it did not sample the trace.
const UNSAMPLED_CALLER = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00'
const METRICS_ON = 'SQLite normal, metrics on'
const TRACED = 'SQLite normal, metrics on, every request traced'
const SAMPLED = 'SQLite normal, metrics on, 10% traced'
const UNSAMPLED = 'SQLite normal, metrics on, traced, callers that do not sample'
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
 * Metrics and tracing, each server against the same one without them, back to back.
 * Metrics are on by default (METRICS=true); tracing is on with an OTLP endpoint,
 * here a collector in this process that takes every export and keeps nothing.
 * Returns the servers (for their start and RSS figures) and the section's lines.
 */
export async function measureObservability ({ dir, phase, server, baseline }: ObserveOptions): Promise<{ targets: Target[], lines: string[] }> {
  const sink = await otlpSink()
  // Each traced server posts under a path of its own, and says after each load how many creates it answered.
  const answered = new Map<string, number>()
  const traced = (file: string, env: Record<string, string> = {}) => ({
    env: { DATABASE_URL: `sqlite:${join(dir, file)}`, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${sink.url}/${file}/v1/traces`, ...env },
    settle: async (target: Server) => { answered.set(file, await createsAnswered(target)) }
  })
  const targets: Target[] = [
    { name: 'baseline, metrics on', script: baseline, env: { DATABASE_URL: 'sqlite::memory:' } },
    { name: 'baseline, metrics off', script: baseline, env: { DATABASE_URL: 'sqlite::memory:', METRICS: 'false' } },
    // Each pair below measured back to back, or one apart, in every round: the untraced server
    // between the two traced ones, each sampled server next to it.
    { name: 'SQLite normal, metrics off', script: server, env: { DATABASE_URL: `sqlite:${join(dir, 'metrics-off.db')}`, METRICS: 'false' } },
    { name: TRACED, script: server, ...traced('traced.db') },
    { name: METRICS_ON, script: server, env: { DATABASE_URL: `sqlite:${join(dir, 'metrics-on.db')}` } },
    { name: SAMPLED, script: server, ...traced('sampled.db', { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }) },
    { name: UNSAMPLED, script: server, ...traced('unsampled.db'), headers: { traceparent: UNSAMPLED_CALLER } },
    { name: UNTRACED_CALLERS, script: server, env: { DATABASE_URL: `sqlite:${join(dir, 'untraced-callers.db')}` }, headers: { traceparent: UNSAMPLED_CALLER } }
  ]
  let rows: Row[]
  try {
    rows = await runPhase(targets, [[CREATE, create]], { ...phase, rounds: OBSERVE_ROUNDS })
  } finally {
    await sink.close()
  }
  const exported = sink.received()
  const rounds = Array.from({ length: OBSERVE_ROUNDS }, (_, round) => round)
  const pairs = [
    ['baseline, metrics on', 'baseline, metrics off'],
    [METRICS_ON, 'SQLite normal, metrics off'],
    [TRACED, METRICS_ON],
    [SAMPLED, METRICS_ON],
    [UNSAMPLED, UNTRACED_CALLERS],
    [UNTRACED_CALLERS, METRICS_ON]
  ]
  const lines = [
    '| request | server | against | req/s | × against | server CPU µs/req | CPU × against | CPU × against, each round | p50 ms | p99 ms | errors | non-2xx |',
    '|---|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|',
    ...pairs.map(([name, against]) => {
      const results = rounds.map((round) => [find(rows, CREATE, name, round), find(rows, CREATE, against, round)])
      const cpu = results.map(([row, reference]) => reference.cpuUsPerRequest / row.cpuUsPerRequest)
      return `| ${CREATE} | ${name} | ${against} | ${fmt(median(results.map(([row]) => row.requests)))} | ` +
        `${fmt(median(results.map(([row, reference]) => row.requests / reference.requests)), 2)} | ${fmt(median(results.map(([row]) => row.cpuUsPerRequest)))} | ` +
        `${fmt(median(cpu), 2)} | ${cpu.map((ratio) => fmt(ratio, 2)).join(', ')} | ` +
        `${median(results.map(([row]) => row.p50))} | ${median(results.map(([row]) => row.p99))} | ` +
        `${results.reduce((sum, [row]) => sum + row.errors, 0)} | ${results.reduce((sum, [row]) => sum + row.non2xx, 0)} |`
    }),
    '', 'Request spans the collector received per create the server answered (warm-up included): ' +
      [[TRACED, 'traced.db'], [SAMPLED, 'sampled.db'], [UNSAMPLED, 'unsampled.db']]
        .map(([name, file]) => `${name.replace('SQLite normal, metrics on, ', '')} ${fmt(sink.received(file).requestSpans / (answered.get(file) ?? NaN), 3)}`).join('; ') +
      ' (every request traced: 1 when none was dropped; 10%: about 0.1; callers that do not sample: 0).',
    '', `Each pair measured in ${OBSERVE_ROUNDS} rounds (BENCH_OBSERVE_ROUNDS), the servers' order flipping every round; each cell is the median over the rounds (errors and non-2xx: the sum). ` +
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
  return { targets, lines }
}
