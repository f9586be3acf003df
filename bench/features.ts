// npm run bench:features: what each default feature, and tracing, adds to a create,
// on against off. A feature costs a few tenths of a µs, and over HTTP the shared machine
// moves a server's CPU per request by more than that from one window to the next; so the
// apps are built in this one process (buildApp, as server.ts builds it) and driven with
// app.inject, in blocks that alternate between them many times, and each block's CPU is
// this process's own. The difference is then set against the floor's CPU per create over
// HTTP, measured in the same run. Written to its own section of bench/results.md.
import { fork, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { Session } from 'node:inspector/promises'
import { mkdtempSync, openSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { turnWriter } from '../src/log-stream.js'
import { floorApp } from './floor.js'
import { create, TOKEN } from './load.js'
import type { Received } from './otlp-sink.js'
import { find, runPhase, type Target } from './phase.js'
import { fmt, machine, median, writeSection } from './report.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30)
// The main thread's CPU clock moves in steps of a scheduler tick (4 ms here): a block takes
// some 50 of them, so that the steps are a fiftieth of a block's figure (see threadCpu).
const BLOCK = Number(process.env.BENCH_BLOCK ?? 5000)
// Requests in flight in each app, as the HTTP bench's 50 connections: batches as full.
const IN_FLIGHT = 50
const here = fileURLToPath(new URL('.', import.meta.url))
const started = performance.now()
const loadAtStart = loadavg()[0]
const dir = mkdtempSync(join(tmpdir(), 'plant-store-features-'))
const ORIGIN = 'https://app.example'
const UNSAMPLED_CALLER = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00'

// On the core the HTTP bench gives its servers; the HTTP phase below moves this process to the other.
const taskset = spawnSync('taskset', ['-cp', '1', String(process.pid)]).status === 0
const sink = fork(join(here, 'otlp-sink-server.js'), { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
const [{ url: sinkUrl }] = await once(sink, 'message') as [{ url: string }]

const logStream = turnWriter(openSync('/dev/null', 'w'))

interface Arm { name: string, app: FastifyInstance, headers: Record<string, string>, cpu: number[], failed: number, creates: number, own?: Map<RegExp, number> }
const FLOOR = 'floor: bare Fastify, bearer auth, schemas, a Map'
const REFERENCE = 'the service, the bench\'s settings'
// Every request from the allowed origin, to every app: only the one with CORS configured reads it.
const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', origin: ORIGIN }

async function service (name: string, env: Record<string, string> = {}, extra: Record<string, string> = {}): Promise<Arm> {
  const config = loadConfig({
    API_TOKENS: TOKEN, DATABASE_URL: `sqlite:${join(dir, `${name.replace(/\W+/g, '-')}.db`)}`, LOG_LEVEL: 'warn', NODE_ENV: 'production', ...env
  })
  // Written as server.ts writes it (log-stream.ts), to a file that keeps nothing.
  const app = await buildApp(config, { logStream })
  await app.ready()
  return { name, app, headers: { ...headers, ...extra }, cpu: [], failed: 0, creates: 0 }
}

const traced = (prefix: string, env: Record<string, string> = {}) => ({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${sinkUrl}/${prefix}/v1/traces`, ...env })
// Each feature's own code, by the files it lives in: what the CPU profile counts for it.
const FEATURES = [
  { feature: 'metrics (request counts and durations)', on: 'METRICS=true (default)', off: 'METRICS=false', env: { METRICS: 'false' }, reference: 'on', code: /plugins\/metrics|src\/metrics\/|prom-client/ },
  { feature: 'load shedding', on: 'MAX_EVENT_LOOP_DELAY=1000 (default)', off: 'MAX_EVENT_LOOP_DELAY=0', env: { MAX_EVENT_LOOP_DELAY: '0' }, reference: 'on', code: /plugins\/load-shedding/ },
  { feature: 'the access log (a line per request)', on: 'LOG_LEVEL=info (default)', off: 'LOG_LEVEL=warn (the bench\'s)', env: { LOG_LEVEL: 'info' }, reference: 'off', code: /src\/request-log|src\/log-stream|sonic-boom/ },
  { feature: 'the per-token rate limit, when set', on: 'RATE_LIMIT_MAX=1000000000', off: 'unset (default)', env: { RATE_LIMIT_MAX: '1000000000' }, reference: 'off', code: /rate-limit/ },
  { feature: 'CORS, when configured (requests from an allowed origin)', on: `CORS_ORIGINS=${ORIGIN}`, off: 'unset (default)', env: { CORS_ORIGINS: ORIGIN }, reference: 'off', code: /plugins\/cors|@fastify\/cors/ }
] as const
const TRACING_CODE = /src\/tracing\/|@opentelemetry/
const TRACING = [
  { tracing: 'every request sampled (the default sampler)', env: traced('all'), extra: {}, prefix: 'all' },
  { tracing: '10% sampled (`parentbased_traceidratio`, `0.1`)', env: traced('ten', { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }), extra: {}, prefix: 'ten' },
  { tracing: 'every caller\'s `traceparent` says not sampled', env: traced('unsampled'), extra: { traceparent: UNSAMPLED_CALLER }, prefix: 'unsampled' }
] as const

const floor: Arm = { name: FLOOR, app: await floorApp(0, [TOKEN]), headers, cpu: [], failed: 0, creates: 0 }
const arms: Arm[] = [floor, await service(REFERENCE)]
for (const { feature, env } of FEATURES) arms.push(await service(feature, env))
for (const { tracing, env, extra } of TRACING) arms.push(await service(tracing, env, extra))
const arm = (name: string): Arm => arms.find((a) => a.name === name) as Arm

// The main thread's own CPU time (Node.js 24, 22.19): the GC's helper threads and the libuv pool
// run beside it, and whatever else the machine runs moves them more than it moves the main thread.
const threadCpuUsage = (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage
function threadCpu (): number {
  const { user, system } = threadCpuUsage?.() ?? process.cpuUsage()
  return user + system
}

let nextId = 1
/** `count` creates with unique ids, IN_FLIGHT at a time; the CPU this process spent, per create. */
async function drive (target: Arm, count: number): Promise<number> {
  let sent = 0
  const lane = async (): Promise<void> => {
    while (sent < count) {
      sent++
      target.creates++
      const response = await target.app.inject({ method: 'POST', url: '/plants', headers: target.headers, payload: `{"id":${nextId++},"name":"bench plant","tag":"bench"}` })
      if (response.statusCode !== 200) target.failed++
    }
  }
  const before = threadCpu()
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane))
  return (threadCpu() - before) / count
}

// Creates per app under the profiler, at its default interval (a sample every ms): sampled more
// often, the profiler's own cost landed on some frames more than others (the access log's 3.8 µs read 12).
const PROFILED = Number(process.env.BENCH_PROFILED ?? 100_000)

interface ProfileNode { id: number, callFrame: { url: string }, children?: number[] }
/**
 * µs per create spent in the files each pattern names, and in what they call of Node's own
 * (a write, a hash): a frame of Node's, or native, counts for the code that called it.
 */
function ownTime (profile: { nodes: ProfileNode[], samples?: number[], timeDeltas?: number[] }, patterns: RegExp[], creates: number): Map<RegExp, number> {
  const time = new Map<number, number>()
  profile.samples?.forEach((id, i) => time.set(id, (time.get(id) ?? 0) + (profile.timeDeltas?.[i] ?? 0)))
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const own = new Map(patterns.map((pattern) => [pattern, 0]))
  const walk = (node: ProfileNode, inherited: RegExp | undefined): void => {
    const url = node.callFrame.url
    const group = patterns.find((pattern) => pattern.test(url)) ?? (url === '' || url.startsWith('node:') ? inherited : undefined)
    if (group !== undefined) own.set(group, (own.get(group) as number) + (time.get(node.id) ?? 0))
    for (const child of node.children ?? []) walk(byId.get(child) as ProfileNode, group)
  }
  walk(profile.nodes[0], undefined)
  for (const [pattern, us] of own) own.set(pattern, us / creates)
  return own
}

try {
  // JIT, caches and the first batches, in every app before any is measured.
  for (const target of arms) await drive(target, BLOCK * 2)
  for (let round = 0; round < ROUNDS; round++) {
    for (const target of round % 2 === 0 ? arms : [...arms].reverse()) {
      // Unmeasured first: the garbage the app before it left is collected on its time, not this one's.
      await drive(target, BLOCK / 5)
      target.cpu.push(await drive(target, BLOCK))
    }
    process.stderr.write(`bench:features: round ${round + 1} of ${ROUNDS}\n`)
  }
  // Then each app once under V8's CPU profiler, for the time its features' own code takes.
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  const groups = [...FEATURES.map(({ code }) => code), TRACING_CODE]
  for (const target of arms.slice(1)) {
    await session.post('Profiler.start')
    const before = target.creates
    await drive(target, PROFILED)
    const { profile } = await session.post('Profiler.stop')
    target.own = ownTime(profile, groups, target.creates - before)
  }
  session.disconnect()
} finally {
  for (const { app } of arms) await app.close()
  rmSync(dir, { recursive: true, force: true })
}
const received = async (prefix: string): Promise<Received> => {
  sink.send(prefix)
  const [{ received }] = await once(sink, 'message') as [{ received: Received }]
  return received
}
const spans: number[] = []
for (const { prefix } of TRACING) spans.push((await received(prefix)).requestSpans)
sink.disconnect()

// The floor over HTTP, as `npm run bench` measures it: what a share of its cost per create is.
const CREATE = 'POST /plants, unique ids'
const floorServer: Target = { name: FLOOR, script: join(here, 'floor-server.js'), env: {} }
if (taskset) spawnSync('taskset', ['-cp', '0', String(process.pid)])
const HTTP_ROUNDS = 3
const httpRows = await runPhase([floorServer], [[CREATE, create]], { port: 28270, taskset, warmUpRequests: 20_000, warmUpSeconds: 2, seconds: 2, rounds: HTTP_ROUNDS })
const httpFloor = Array.from({ length: HTTP_ROUNDS }, (_, round) => find(httpRows, CREATE, FLOOR, round).cpuUsPerRequest)
const floorCpu = median(httpFloor)

const rounds = Array.from({ length: ROUNDS }, (_, round) => round)
const reference = arm(REFERENCE)
const pct = (v: number): string => `${v < 0 ? '−' : ''}${fmt(Math.abs(100 * v), 1)}%`
const spread = (values: number[], show: (v: number) => string): string => {
  const sorted = [...values].sort((a, b) => a - b)
  return `${show(sorted[Math.floor(sorted.length / 4)])} to ${show(sorted[Math.floor(3 * sorted.length / 4)])}`
}
const failed = arms.reduce((sum, a) => sum + a.failed, 0)
const lines = [
  `- command: \`npm run bench:features\` (BENCH_ROUNDS=${ROUNDS}, BENCH_BLOCK=${BLOCK})`,
  `- date: ${new Date().toISOString()}; whole run ${fmt((performance.now() - started) / 1000)} s`,
  `- machine: ${machine()}; load average (1 min) ${fmt(loadAtStart, 1)} at the start, ${fmt(loadavg()[0], 1)} at the end`,
  `- load: ${arms.length} apps in this one process, each built by buildApp from its own environment (SQLite normal, \`LOG_LEVEL=warn\`, ` +
    '`NODE_ENV=production` unless the row says otherwise; the log written to /dev/null as the server writes it), and the floor\'s app (bench/floor.ts); ' +
    `POST /plants with unique ids through \`app.inject\`, ${IN_FLIGHT} in flight, every request with \`Origin: ${ORIGIN}\`; ${ROUNDS} rounds of a block of ` +
    `${fmt(BLOCK)} creates per app, each after an unmeasured fifth as long, the order flipping every round. A block's CPU is the main thread's own (\`process.threadCpuUsage()\`, which moves in steps of a scheduler tick). ` +
    `Answers other than 200: ${failed}.`,
  `- no HTTP in these figures: no socket or HTTP parser, and light-my-request's own work instead. Here the floor's app spent ${fmt(median(floor.cpu), 1)} µs ` +
    `per create (middle half of the rounds ${spread(floor.cpu, (v) => fmt(v, 1))}), the service with the bench's settings ${fmt(median(reference.cpu), 1)}. ` +
    'A feature\'s on − off is set against the floor\'s CPU per create over HTTP, measured in the same run as `npm run bench` measures it ' +
    `(${taskset ? 'taskset, ' : ''}50 connections, ${HTTP_ROUNDS} windows of 2 s): ${fmt(floorCpu, 1)} µs (${httpFloor.map((v) => fmt(v, 1)).join(', ')}).`,
  `- its own code: after the rounds, ${fmt(PROFILED)} creates per app under V8's CPU profiler (a sample every ms, BENCH_PROFILED), and the time in the feature's files ` +
    'and in what they call of Node\'s own (a write, a hash), per create. It leaves out what Fastify spends running one more hook and Node writing one more header; ' +
    'the shared machine moves it far less than the on − off difference.',
  '',
  '| feature | on | off | CPU µs/create, on | off | on − off, µs | on − off, share of the floor\'s CPU per create over HTTP | on − off, middle half of the rounds, µs | its own code, µs/create (CPU profile, on) | the same, share of the floor |',
  '|---|---|---|---:|---:|---:|---:|---|---:|---:|',
  ...FEATURES.map(({ feature, on, off, reference: ref, code }) => {
    const [onArm, offArm] = ref === 'on' ? [reference, arm(feature)] : [arm(feature), reference]
    const cost = rounds.map((r) => onArm.cpu[r] - offArm.cpu[r])
    const own = onArm.own?.get(code) as number
    return `| ${feature} | ${on} | ${off} | ${fmt(median(onArm.cpu), 2)} | ${fmt(median(offArm.cpu), 2)} | ${fmt(median(cost), 2)} | ` +
      `${pct(median(cost) / floorCpu)} | ${spread(cost, (v) => fmt(v, 1))} | ${fmt(own, 2)} | ${pct(own / floorCpu)} |`
  }),
  '',
  'Tracing, against the same app untraced (the bench\'s settings), to an OTLP collector in a process of its own:',
  '',
  '| tracing | CPU µs/create | traced − untraced, µs | middle half of the rounds, µs | untraced ÷ traced, CPU per create, here | tracing\'s own code, µs/create (CPU profile) | request spans the collector received per create |',
  '|---|---:|---:|---|---:|---:|---:|',
  ...TRACING.map(({ tracing }, i) => {
    const cost = rounds.map((r) => arm(tracing).cpu[r] - reference.cpu[r])
    const ratio = rounds.map((r) => reference.cpu[r] / arm(tracing).cpu[r])
    return `| ${tracing} | ${fmt(median(arm(tracing).cpu), 2)} | ${fmt(median(cost), 2)} | ${spread(cost, (v) => fmt(v, 1))} | ${fmt(median(ratio), 3)} | ` +
      `${fmt(arm(tracing).own?.get(TRACING_CODE) as number, 2)} | ${fmt(spans[i] / arm(tracing).creates, 3)} |`
  })
].join('\n')
writeSection(join(here, '..', '..', 'bench', 'results.md'), '## `npm run bench:features`', lines)
process.stdout.write(`${lines}\n`)
