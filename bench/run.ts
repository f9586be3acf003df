// npm run bench: measures the real service (dist/) as a child process under
// autocannon, each store against a baseline whose store keeps nothing.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { writeCursor } from '../plugins/plants/cursor.js'
import { fillStore, timePages, type PageTimes } from './big-store.js'
import { create, getPath, getRandom, load, rss, startServer, stopServer, type Server, type Workload } from './load.js'
import { measureObservability, OBSERVE_INSTANCES, OBSERVE_ROUNDS } from './observe.js'
import { find, runPhase, type Row, type Target } from './phase.js'
import { freshDatabase, hasPgbench, pgbenchTps } from './pgbench.js'
import { floorCells, FLOOR_ALIGN, FLOOR_HEADER, fmt, LOAD_ALIGN, LOAD_HEADER, loadCells, machine, writeSection } from './report.js'
import { drained, measureSender, startReceiver, subscribe, type SenderFigures } from './webhooks.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const WARM_UP_REQUESTS = 20_000
const WARM_UP_SECONDS = 2
const SOAK_SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 120)
const PLANTS = Number(process.env.BENCH_PLANTS ?? 1_000_000)
const PG_URL = process.env.PLANT_STORE_TEST_PG_URL
const here = fileURLToPath(new URL('.', import.meta.url))
const SERVER = join(here, '..', 'src', 'server.js')
const BASELINE = join(here, 'baseline-server.js')
const FLOOR = join(here, 'floor-server.js')
const withPg = PG_URL !== undefined && PG_URL !== ''
const started = performance.now()
const loadAtStart = loadavg()[0]

// The servers listen on fixed ports below Linux's ephemeral range (32768–60999), where an
// outgoing connection's own port could take one. The load generator on core 0, the servers on core 1.
const taskset = spawnSync('taskset', ['-cp', '0', String(process.pid)]).status === 0
const dir = mkdtempSync(join(tmpdir(), 'plant-store-bench-'))
const phase = { taskset, warmUpRequests: WARM_UP_REQUESTS, warmUpSeconds: WARM_UP_SECONDS, seconds: SECONDS }
// Every row against the floor (bare Fastify, bearer auth, the schemas, a Map); the
// service with a store that keeps nothing is the cost of everything but the store.
const FLOOR_NAME = 'floor: bare Fastify, bearer auth, schemas, a Map'
const EMPTY = 'the service, a store that keeps nothing'
const floor = (plants = 0): Target => ({ name: FLOOR_NAME, script: FLOOR, env: { BENCH_PLANTS: String(plants) } })
const baseline = (): Target => ({ name: EMPTY, script: BASELINE, env: { DATABASE_URL: 'sqlite::memory:' } })
const postgres = (url: string): Target => ({ name: 'PostgreSQL', script: SERVER, env: { DATABASE_URL: url, DATABASE_POOL_SIZE: '10' } })

// Creates: POST /plants with unique ids into empty stores.
const CREATE = 'POST /plants, unique ids'
const createTargets: Target[] = [floor(), baseline(),
  { name: 'SQLite, synchronous=normal', script: SERVER, env: { DATABASE_URL: `sqlite:${join(dir, 'normal.db')}`, SQLITE_SYNCHRONOUS: 'normal' } },
  { name: 'SQLite, synchronous=full', script: SERVER, env: { DATABASE_URL: `sqlite:${join(dir, 'full.db')}`, SQLITE_SYNCHRONOUS: 'full' } }]
let creates: Row[]
let pgbench: number | undefined
const createDb = withPg ? await freshDatabase(PG_URL) : undefined
try {
  if (createDb !== undefined) createTargets.push(postgres(createDb.url))
  creates = await runPhase(createTargets, [[CREATE, create]], { ...phase, port: 28200 })
  if (createDb !== undefined && hasPgbench()) pgbench = await pgbenchTps(createDb.url, 50, SECONDS, taskset)
} finally {
  await createDb?.drop()
}

// Metrics and tracing: each server against the same one without them (bench/observe.ts).
const observe = await measureObservability({ dir, phase: { ...phase, port: 28220 }, server: SERVER, baseline: BASELINE })

// Webhooks: each store with no endpoint against the same with one subscribed (a
// receiver in this process that answers 204), then the sender alone on each store.
const receiver = await startReceiver()
const hookEnv = { WEBHOOK_ALLOW_PRIVATE: 'true' }
const hookDbs = withPg ? await Promise.all([0, 1, 2].map(() => freshDatabase(PG_URL))) : []
const subscribed = { setup: (server: Server) => subscribe(server, receiver), settle: drained }
const hookTargets: Target[] = [
  { name: 'SQLite normal, no endpoint', script: SERVER, env: { DATABASE_URL: `sqlite:${join(dir, 'hooks-none.db')}`, ...hookEnv } },
  { name: 'SQLite normal, one endpoint', script: SERVER, env: { DATABASE_URL: `sqlite:${join(dir, 'hooks-one.db')}`, ...hookEnv }, ...subscribed },
  ...(withPg
    ? [{ name: 'PostgreSQL, no endpoint', script: SERVER, env: { DATABASE_URL: hookDbs[0].url, DATABASE_POOL_SIZE: '10', ...hookEnv } },
        { name: 'PostgreSQL, one endpoint', script: SERVER, env: { DATABASE_URL: hookDbs[1].url, DATABASE_POOL_SIZE: '10', ...hookEnv }, ...subscribed }]
    : [])
]
const hookPairs = [['SQLite normal, one endpoint', 'SQLite normal, no endpoint'], ...(withPg ? [['PostgreSQL, one endpoint', 'PostgreSQL, no endpoint']] : [])]
let hookRows: Row[]
const senders: Array<{ name: string, figures: SenderFigures }> = []
try {
  hookRows = await runPhase(hookTargets, [[CREATE, create]], { ...phase, port: 28230 })
  const senderStores = [['SQLite normal', `sqlite:${join(dir, 'hooks-sender.db')}`], ...(withPg ? [['PostgreSQL', hookDbs[2].url]] : [])]
  for (const [i, [name, url]] of senderStores.entries()) {
    const server = await startServer(SERVER, { DATABASE_URL: url, ...hookEnv }, 28240 + i, taskset)
    try {
      await subscribe(server, receiver)
      senders.push({ name, figures: await measureSender(server, receiver, SECONDS, 1e12 + i * 1e6) })
    } finally {
      await stopServer(server)
    }
  }
} finally {
  await receiver.close()
  for (const db of hookDbs) await db.drop()
}

// Reads from a million plants, filled by one bulk statement per store.
const deepAfter = BigInt(Math.floor(PLANTS * 0.9))
const reads: Array<[string, Workload]> = [
  ['GET /plants/{id}, random existing ids', getRandom(PLANTS)],
  ['GET /plants?limit=20, the first page', getPath('/plants?limit=20')],
  [`GET /plants?limit=20, deep: cursor past plant ${fmt(Number(deepAfter))}`, getPath(`/plants?limit=20&cursor=${writeCursor(deepAfter, undefined)}`)]
]
const stores: Array<{ name: string, url: string, fillMs: number, pages?: PageTimes }> = []
const readDb = withPg ? await freshDatabase(PG_URL) : undefined
const readTargets: Target[] = [floor(PLANTS), baseline()]
let readRows: Row[]
try {
  for (const [name, url] of [['SQLite', `sqlite:${join(dir, 'big.db')}`], ...(readDb ? [['PostgreSQL', readDb.url]] : [])]) {
    const store = { name, url, fillMs: await fillStore(url, PLANTS) }
    process.stderr.write(`bench: ${name}: ${fmt(PLANTS)} plants in ${fmt(store.fillMs / 1000, 1)} s\n`)
    stores.push(store)
    readTargets.push(name === 'SQLite' ? { name, script: SERVER, env: { DATABASE_URL: url } } : postgres(url))
  }
  readRows = await runPhase(readTargets, reads, { ...phase, port: 28210 })
  for (const store of stores) store.pages = await timePages(store.url, deepAfter)
} finally {
  await readDb?.drop()
}

// Sustained load on SQLite normal: RSS after 10 s against RSS at the end.
const soak = await startServer(SERVER, { DATABASE_URL: `sqlite:${join(dir, 'soak.db')}` }, 28201, taskset)
const samples: Array<[number, number]> = []
await load(soak, create, SOAK_SECONDS, (elapsed) => { samples.push([elapsed, rss(soak.child.pid as number, 'VmRSS')]) })
await stopServer(soak)
rmSync(dir, { recursive: true, force: true })

const FLOOR_NOTE = '× floor: req/s over the floor\'s, and the floor\'s server CPU per request over this row\'s (both above 1 when faster than the floor). ' +
  `The floor is bare Fastify with @fastify/bearer-auth, the service's TypeBox schemas and a Map (bench/floor-server.ts); "${EMPTY}" is the whole service with a store that does nothing (bench/baseline-server.ts): the cost of everything but the store.`
const lines = [
  '### Creates into empty stores', '',
  `| request | server | ${FLOOR_HEADER} |`, `|---|---|${FLOOR_ALIGN}|`,
  ...creates.map((r) => `| ${r.workload} | ${r.target} | ${floorCells(r.result, find(creates, CREATE, FLOOR_NAME))} |`),
  // A row of the table: after the note below, it would start a table of its own without a header.
  ...(pgbench === undefined ? [] : [`| pgbench: the same single-row INSERT, random ids, 50 clients | | ${fmt(pgbench)} tps |${' |'.repeat(7)}`]),
  '', FLOOR_NOTE
]
if (pgbench !== undefined) {
  lines.push('', `PostgreSQL through the service: ${fmt(find(creates, CREATE, 'PostgreSQL').requests / pgbench, 2)}× pgbench's single-row INSERT TPS.`)
}
lines.push('', '### Metrics and tracing', '', ...observe.lines)
lines.push('', '### Webhooks', '',
  `| request | server | against | ${LOAD_HEADER.replace('× baseline', '× against')} | CPU/req × against |`, `|---|---|---|${LOAD_ALIGN}|---:|`,
  ...hookPairs.map(([server, against]) => {
    const [row, reference] = [find(hookRows, CREATE, server), find(hookRows, CREATE, against)]
    return `| ${CREATE} | ${server} | ${against} | ${loadCells(row, reference)} | ${fmt(row.cpuUsPerRequest / reference.cpuUsPerRequest, 2)} |`
  }),
  '', 'One endpoint: a receiver in the bench process (answers 204 at once) subscribed with `POST /webhooks`; each create then writes its event and one delivery in its own batch\'s transaction, and the sender posts it. ' +
    'Every server runs with `WEBHOOK_ALLOW_PRIVATE=true`; after each warm-up and each measured load the bench waits until the backlog is delivered, so that no sender works during another server\'s measurement. ' +
    'The sender\'s CPU is in the server\'s CPU per request.',
  '', '| store | pending when the creates stopped | delivered per second, no creates meanwhile | create → delivery p50 ms | p99 ms |', '|---|---:|---:|---:|---:|',
  ...senders.map(({ name, figures }) => `| ${name} | ${fmt(figures.pending)} | ${fmt(figures.drainPerSecond)} | ${fmt(figures.latency.p50, 1)} | ${fmt(figures.latency.p99, 1)} |`),
  '', `The sender alone: a fresh server with one endpoint, under the create load for ${SECONDS} s; then the time until its backlog (\`plant_store_webhook_backlog\`) is 0; ` +
    `then ${senders[0]?.figures.latency.samples ?? 0} single creates 20 ms apart, each from the POST's sending to the receiver's having the delivery.`)
lines.push('', `### Reads from ${fmt(PLANTS)} plants`, '',
  `| request | server | ${FLOOR_HEADER} |`, `|---|---|${FLOOR_ALIGN}|`,
  ...readRows.map((r) => `| ${r.workload} | ${r.target} | ${floorCells(r.result, find(readRows, r.workload, FLOOR_NAME))} |`),
  '', `The floor's reads answer from a Map of ${fmt(PLANTS)} plants; its list answers the first ${'`limit`'} of them, at any cursor.`,
  '', `Filling ${fmt(PLANTS)} plants with one statement: ${stores.map((s) => `${s.name} ${fmt(s.fillMs / 1000, 1)} s`).join(', ')}.`,
  '', '### Deep page against first page', '',
  '| store | first page req/s | deep page req/s | deep ÷ first, time per request | the same, over the baseline\'s | first page CPU µs/req | deep page CPU µs/req | deep ÷ first, CPU | store alone, first page µs | store alone, deep page µs | deep ÷ first, store alone |',
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...stores.map((s) => {
    const [first, deep, baseFirst, baseDeep] = [[1, s.name], [2, s.name], [1, EMPTY], [2, EMPTY]]
      .map(([i, name]) => find(readRows, reads[i as number][0], name as string))
    const pages = s.pages as PageTimes
    return `| ${s.name} | ${fmt(first.requests)} | ${fmt(deep.requests)} | ${fmt(first.requests / deep.requests, 2)} | ` +
      `${fmt((first.requests / deep.requests) / (baseFirst.requests / baseDeep.requests), 2)} | ` +
      `${fmt(first.cpuUsPerRequest)} | ${fmt(deep.cpuUsPerRequest)} | ${fmt(deep.cpuUsPerRequest / first.cpuUsPerRequest, 2)} | ` +
      `${fmt(pages.first, 1)} | ${fmt(pages.deep, 1)} | ${fmt(pages.ratio, 2)} |`
  }),
  '', 'Time per request is the inverse of req/s at saturation. The baseline\'s store does the same work at any depth, ' +
    'so its own deep ÷ first is what the machine and the HTTP path alone make of the two requests; the column after divides it out. ' +
    '"Store alone" is `store.list({ limit: 21 })` called from the bench process without HTTP: 201 rounds of 20 pages ' +
    'of each kind back to back, the order flipping every round; the medians of each kind\'s µs per page and of the rounds\' deep ÷ first.',
  '', '### Servers', '', '| phase | server | start→ready ms | peak RSS MiB |', '|---|---|---:|---:|',
  ...[['creates, empty store', createTargets], ['metrics and tracing', observe.targets], ['webhooks', hookTargets], [`reads, ${fmt(PLANTS)} plants`, readTargets]].flatMap(([label, targets]) =>
    (targets as Target[]).map((t) => `| ${label as string} | ${t.name} | ${fmt(t.server?.startToReadyMs ?? NaN)} | ${fmt(t.peakRss ?? NaN, 1)} |`)))

// V8 lets its heap grow before a major collection, so RSS saws up and down:
// a leak shows as growth across the whole series, not between two samples.
const at10 = samples.find(([s]) => s >= 10)?.[1] ?? NaN
const marks = samples.filter(([s], i) => i === samples.length - 1 || (Math.round(s) % 10 === 0 && s >= 10))
lines.push('', '### Sustained load', '', `SQLite normal, creates, ${SOAK_SECONDS} s: RSS in MiB while under load, and against the first (after 10 s): ` +
  marks.map(([s, mib]) => `${fmt(s)} s: ${fmt(mib, 1)} (${fmt(mib / at10, 2)}×)`).join(', ') + '.')

const report = [
  `- command: \`${withPg ? `PLANT_STORE_TEST_PG_URL=${PG_URL} ` : ''}npm run bench\` (BENCH_SECONDS=${SECONDS}, BENCH_SOAK_SECONDS=${SOAK_SECONDS}, BENCH_PLANTS=${PLANTS}, BENCH_OBSERVE_ROUNDS=${OBSERVE_ROUNDS}, BENCH_OBSERVE_INSTANCES=${OBSERVE_INSTANCES})`,
  `- date: ${new Date().toISOString()}`,
  `- machine: ${machine()}; load average (1 min) ${fmt(loadAtStart, 1)} at the start, ${fmt(loadavg()[0], 1)} at the end`,
  `- whole run: ${fmt((performance.now() - started) / 1000)} s after the build`,
  `- load: autocannon, 50 connections, ${taskset ? 'autocannon on core 0, the servers on core 1 (taskset)' : 'no taskset: not pinned'}; ` +
    `each server warmed up on each of its workloads (${fmt(WARM_UP_REQUESTS)} requests or ${WARM_UP_SECONDS} s, whichever comes first) before any is measured, ` +
    `then ${SECONDS} s measured per row, each workload on every store back to back. Every request carries a bearer token.`,
  '- server CPU µs/req: the server process\'s `process.cpuUsage()` (user + system, all its threads) over the measured window, ' +
    'divided by the requests completed in it; PostgreSQL\'s own processes are not in it.',
  '- p50 and p99 are in whole milliseconds (autocannon\'s resolution).',
  '', ...lines
].join('\n')
writeSection(join(here, '..', '..', 'bench', 'results.md'), '## `npm run bench`', report)
process.stdout.write(`${report}\n`)
