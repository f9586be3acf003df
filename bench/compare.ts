// Before and after: the create scenario of `npm run bench` on two builds of the
// service, in one session, then its reads (GET by id and the first page) from a
// store of BENCH_PLANTS plants that both builds read. Both builds' servers run side by side; each round
// measures every store on one build and then on the other (the order flipping
// every round), so a pair is seconds apart and the machine's drift falls on
// both alike. Each build also has its own baseline, since a change on the
// request path moves the baseline too; and every round measures the floor (bare
// Fastify, bench/floor-server.ts, from this worktree), the reference both builds
// are read against. Last, the webhook sender's drain on each build and store.
//
//   npm run bench:compare -- <worktree before> <worktree after>
//
// This worktree is built by the script; the other must be built already
// (`npm run build && npx tsc -p bench/tsconfig.json` in it).
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { fillStore } from './big-store.js'
import { create, getPath, getRandom, startServer, stopServer, type Workload } from './load.js'
import { find, runPhase, type Row, type Target } from './phase.js'
import { freshDatabase } from './pgbench.js'
import { fmt, machine, median, writeSection } from './report.js'
import { measureSender, startReceiver, subscribe } from './webhooks.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6)
const PLANTS = Number(process.env.BENCH_PLANTS ?? 100_000)
const SENDER_ROUNDS = Number(process.env.BENCH_SENDER_ROUNDS ?? 2)
const PG_URL = process.env.PLANT_STORE_TEST_PG_URL
const withPg = PG_URL !== undefined && PG_URL !== ''
const here = fileURLToPath(new URL('.', import.meta.url))
const taskset = spawnSync('taskset', ['-cp', '0', String(process.pid)]).status === 0
const started = performance.now()
const loadAtStart = loadavg()[0]

const builds = process.argv.slice(2, 4).map((dir) => {
  // The service's own files decide what is measured: a bench-only commit on top changes nothing.
  const commit = execFileSync('git', ['-C', dir, 'log', '-1', '--format=%h', '--', 'src', 'plugins', 'schemas', 'package-lock.json'], { encoding: 'utf8' }).trim()
  return { dir: resolve(dir), commit }
})
if (builds.length !== 2) throw new Error('usage: npm run bench:compare -- <worktree before> <worktree after>')

const CREATE = 'POST /plants, unique ids'
const FLOOR = 'floor: bare Fastify, bearer auth, schemas, a Map'
const READS: Array<[string, Workload]> = [
  ['GET /plants/{id}, random existing ids', getRandom(PLANTS)],
  ['GET /plants?limit=20, the first page', getPath('/plants?limit=20')]
]
const STORES = ['baseline', 'SQLite, synchronous=normal', 'SQLite, synchronous=full', ...(withPg ? ['PostgreSQL'] : [])]
const dir = mkdtempSync(join(tmpdir(), 'plant-store-compare-'))
const dbs = withPg ? await Promise.all(builds.map(() => freshDatabase(PG_URL))) : []
let rows: Row[]
let readRows: Row[]
// The webhook sender of each build and store, as `npm run bench` measures it: creates for
// SECONDS with one endpoint subscribed, then the drain of what is pending, on a fresh store.
const SENDER_STORES = ['SQLite, synchronous=normal', ...(withPg ? ['PostgreSQL'] : [])]
const drains = new Map<string, number[]>()
try {
  // Pairs side by side: baseline before, baseline after, SQLite normal before, …
  const floor: Target = { name: FLOOR, script: join(here, 'floor-server.js'), env: {} }
  const targets = [floor, ...STORES.flatMap((store) => builds.map((build, b): Target => {
    const server = join(build.dir, 'dist', 'src', 'server.js')
    const name = `${store} @ ${build.commit}`
    if (store === 'baseline') return { name, script: join(build.dir, 'dist', 'bench', 'baseline-server.js'), env: { DATABASE_URL: 'sqlite::memory:' } }
    if (store === 'PostgreSQL') return { name, script: server, env: { DATABASE_URL: dbs[b].url, DATABASE_POOL_SIZE: '10' } }
    const synchronous = store.endsWith('full') ? 'full' : 'normal'
    return { name, script: server, env: { DATABASE_URL: `sqlite:${join(dir, `${synchronous}-${b}.db`)}`, SQLITE_SYNCHRONOUS: synchronous } }
  }))]
  const phase = { taskset, warmUpRequests: 20_000, warmUpSeconds: 2, seconds: SECONDS, rounds: ROUNDS }
  rows = await runPhase(targets, [[CREATE, create]], { ...phase, port: 28220 })

  // Reads: both builds read one store of each kind, filled once (reads change nothing).
  const readStores = [['SQLite', `sqlite:${join(dir, 'reads.db')}`], ...(withPg ? [['PostgreSQL', dbs[0].url]] : [])]
  for (const [, url] of readStores) await fillStore(url, PLANTS)
  const readTargets = [{ ...floor, env: { BENCH_PLANTS: String(PLANTS) } }, ...readStores.flatMap(([store, url]) => builds.map((build): Target => ({
    name: `${store} @ ${build.commit}`,
    script: join(build.dir, 'dist', 'src', 'server.js'),
    env: { DATABASE_URL: url, ...(store === 'PostgreSQL' && { DATABASE_POOL_SIZE: '10' }) }
  })))]
  readRows = await runPhase(readTargets, READS, { ...phase, port: 28240 })

  const receiver = await startReceiver()
  try {
    for (let round = 0; round < SENDER_ROUNDS; round++) {
      for (const [s, store] of SENDER_STORES.entries()) {
        for (const b of round % 2 === 0 ? [0, 1] : [1, 0]) {
          const db = store === 'PostgreSQL' ? await freshDatabase(PG_URL as string) : undefined
          const url = db?.url ?? `sqlite:${join(dir, `sender-${round}-${b}.db`)}`
          const server = await startServer(join(builds[b].dir, 'dist', 'src', 'server.js'), { DATABASE_URL: url, WEBHOOK_ALLOW_PRIVATE: 'true' }, 28260, taskset)
          try {
            await subscribe(server, receiver)
            const { drainPerSecond } = await measureSender(server, receiver, SECONDS, 1e12 + ((round * 2 + s) * 2 + b) * 1e6)
            const key = `${store} @ ${builds[b].commit}`
            drains.set(key, [...drains.get(key) ?? [], drainPerSecond])
          } finally {
            await stopServer(server)
            await db?.drop()
          }
        }
      }
    }
  } finally {
    await receiver.close()
  }
} finally {
  for (const db of dbs) await db.drop()
  rmSync(dir, { recursive: true, force: true })
}

const rounds = Array.from({ length: ROUNDS }, (_, round) => round)
const result = (store: string, build: number, round: number) => find(rows, CREATE, `${store} @ ${builds[build].commit}`, round)
const floorCpu = (round: number) => find(rows, CREATE, FLOOR, round).cpuUsPerRequest
/** The median over the rounds, then each round's figure. */
const cell = (values: number[], digits: number): string =>
  `${fmt(median(values), digits)} (${values.map((v) => fmt(v, digits)).join(', ')})`

const [before, after] = builds.map((b) => b.commit)
const lines = [
  `- command: \`${withPg ? `PLANT_STORE_TEST_PG_URL=${PG_URL} ` : ''}npm run bench:compare -- ${builds.map((b) => b.dir).join(' ')}\` ` +
    `(BENCH_SECONDS=${SECONDS}, BENCH_ROUNDS=${ROUNDS})`,
  `- builds: before ${before}, after ${after} (the last commit to touch src, plugins, schemas or package-lock.json in each)`,
  `- date: ${new Date().toISOString()}; whole run ${fmt((performance.now() - started) / 1000)} s`,
  `- machine: ${machine()}; load average (1 min) ${fmt(loadAtStart, 1)} at the start, ${fmt(loadavg()[0], 1)} at the end`,
  `- load: the create scenario of \`npm run bench\` (${taskset ? 'taskset, ' : ''}50 connections, warm-up, ${SECONDS} s measured); all ` +
    `${STORES.length * 2 + 1} servers up at once; ${ROUNDS} rounds, each store measured on one build and then the other, the order flipping every round. ` +
    'Each cell: the median over the rounds, then each round\'s figure. CPU × floor: the floor\'s server CPU per request over the row\'s, in the same round ' +
    `(the floor: ${fmt(median(rounds.map(floorCpu)), 1)} µs per request).`,
  '',
  `| store | build | req/s | × its baseline | server CPU µs/req | CPU × floor | ${after} ÷ ${before}, req/s | ${after} ÷ ${before}, CPU µs/req |`,
  '|---|---|---:|---:|---:|---:|---:|---:|',
  ...STORES.flatMap((store) => [0, 1].map((b) => {
    const own = (round: number) => result(store, b, round)
    // The pair's ratios go on the second build's line.
    const paired = b === 0
      ? ['', '']
      : [cell(rounds.map((r) => own(r).requests / result(store, 0, r).requests), 2), cell(rounds.map((r) => own(r).cpuUsPerRequest / result(store, 0, r).cpuUsPerRequest), 2)]
    return `| ${store} | ${builds[b].commit} | ${cell(rounds.map((r) => own(r).requests), 0)} | ` +
      `${cell(rounds.map((r) => own(r).requests / result('baseline', b, r).requests), 2)} | ` +
      `${cell(rounds.map((r) => own(r).cpuUsPerRequest), 0)} | ${cell(rounds.map((r) => floorCpu(r) / own(r).cpuUsPerRequest), 2)} | ${paired.join(' | ')} |`
  })),
  '',
  `Reads from ${fmt(PLANTS)} plants (BENCH_PLANTS), both builds reading one store of each kind; the floor answers from a Map of as many through the same schemas.`,
  '',
  `| request | store | build | req/s | server CPU µs/req | CPU × floor | ${after} ÷ ${before}, CPU µs/req |`,
  '|---|---|---|---:|---:|---:|---:|',
  ...READS.flatMap(([workload]) => (withPg ? ['SQLite', 'PostgreSQL'] : ['SQLite']).flatMap((store) => [0, 1].map((b) => {
    const own = (round: number) => find(readRows, workload, `${store} @ ${builds[b].commit}`, round)
    const floorOf = (round: number) => find(readRows, workload, FLOOR, round).cpuUsPerRequest
    const paired = b === 0 ? '' : cell(rounds.map((r) => own(r).cpuUsPerRequest / find(readRows, workload, `${store} @ ${builds[0].commit}`, r).cpuUsPerRequest), 2)
    return `| ${workload} | ${store} | ${builds[b].commit} | ${cell(rounds.map((r) => own(r).requests), 0)} | ` +
      `${cell(rounds.map((r) => own(r).cpuUsPerRequest), 0)} | ${cell(rounds.map((r) => floorOf(r) / own(r).cpuUsPerRequest), 2)} | ${paired} |`
  }))),
  '',
  `The webhook sender: creates for ${SECONDS} s with one endpoint subscribed (a receiver in the bench process that answers 204 at once), then the rate at which ` +
    `what was pending is delivered, as \`npm run bench\` measures it; a fresh store and server for each figure, ${SENDER_ROUNDS} rounds (BENCH_SENDER_ROUNDS), the builds' order flipping every round.`,
  '',
  `| store | build | deliveries/s | × SQLite's, same build and round | ${after} ÷ ${before} |`,
  '|---|---|---:|---:|---:|',
  ...SENDER_STORES.flatMap((store) => [0, 1].map((b) => {
    const own = drains.get(`${store} @ ${builds[b].commit}`) ?? []
    const sqlite = drains.get(`${SENDER_STORES[0]} @ ${builds[b].commit}`) ?? []
    const paired = b === 0 ? '' : cell(own.map((v, r) => v / (drains.get(`${store} @ ${builds[0].commit}`) ?? [])[r]), 2)
    return `| ${store} | ${builds[b].commit} | ${cell(own, 0)} | ${cell(own.map((v, r) => v / sqlite[r]), 2)} | ${paired} |`
  }))
].join('\n')
writeSection(join(here, '..', '..', 'bench', 'results.md'), `## Before and after: ${before} against ${after}`, lines)
process.stdout.write(`${lines}\n`)
