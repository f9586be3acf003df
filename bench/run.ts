// npm run bench: measures the real service (dist/) as a child process under
// autocannon, each store against a baseline whose store keeps nothing.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, totalmem, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { load, rss, startServer, stopServer, type LoadResult } from './load.js'
import { freshDatabase, hasPgbench, pgbenchTps } from './pgbench.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const SOAK_SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 120)
const PG_URL = process.env.PLANT_STORE_TEST_PG_URL
const here = fileURLToPath(new URL('.', import.meta.url))
const SERVER = join(here, '..', 'src', 'server.js')
const BASELINE = join(here, 'baseline-server.js')

// The load generator on core 0, the server on core 1.
const taskset = spawnSync('taskset', ['-cp', '0', String(process.pid)]).status === 0
const dir = mkdtempSync(join(tmpdir(), 'plant-store-bench-'))

interface Row extends LoadResult { name: string, peakRss: number, startToReadyMs: number }

async function scenario (name: string, script: string, env: Record<string, string>): Promise<Row> {
  const server = await startServer(script, env, 38200, taskset)
  await load(server.url, 2) // warm-up: JIT, connections, page cache
  const result = await load(server.url, SECONDS)
  const peakRss = rss(server.child.pid as number, 'VmHWM')
  await stopServer(server)
  process.stderr.write(`bench: ${name}: ${Math.round(result.requests)} req/s\n`)
  return { name, ...result, peakRss, startToReadyMs: server.startToReadyMs }
}

const rows: Row[] = []
rows.push(await scenario('baseline (store keeps nothing)', BASELINE, { DATABASE_URL: 'sqlite::memory:' }))
rows.push(await scenario('SQLite, synchronous=normal', SERVER, { DATABASE_URL: `sqlite:${join(dir, 'normal.db')}`, SQLITE_SYNCHRONOUS: 'normal' }))
rows.push(await scenario('SQLite, synchronous=full', SERVER, { DATABASE_URL: `sqlite:${join(dir, 'full.db')}`, SQLITE_SYNCHRONOUS: 'full' }))

let pgbench: number | undefined
if (PG_URL !== undefined && PG_URL !== '') {
  const db = await freshDatabase(PG_URL)
  try {
    rows.push(await scenario('PostgreSQL', SERVER, { DATABASE_URL: db.url, DATABASE_POOL_SIZE: '10' }))
    if (hasPgbench()) pgbench = await pgbenchTps(db.url, 50, SECONDS, taskset)
  } finally {
    await db.drop()
  }
}

// Sustained load on SQLite normal: RSS after 10 s against RSS at the end.
const soak = await startServer(SERVER, { DATABASE_URL: `sqlite:${join(dir, 'soak.db')}` }, 38201, taskset)
const samples: Array<[number, number]> = []
await load(soak.url, SOAK_SECONDS, (elapsed) => { samples.push([elapsed, rss(soak.child.pid as number, 'VmRSS')]) })
await stopServer(soak)
rmSync(dir, { recursive: true, force: true })

const baseline = rows[0]
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
const lines = [
  '| scenario | req/s | × baseline | p50 ms | p99 ms | errors | non-2xx | peak RSS MiB | start→ready ms |',
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ...rows.map((r) => `| ${r.name} | ${fmt(r.requests)} | ${fmt(r.requests / baseline.requests, 2)} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.non2xx} | ${fmt(r.peakRss, 1)} | ${fmt(r.startToReadyMs)} |`)
]
if (pgbench !== undefined) {
  const pgRow = rows.find((r) => r.name === 'PostgreSQL') as Row
  lines.push(`| pgbench, the same single-row INSERT, 50 clients | ${fmt(pgbench)} tps | | | | | | | |`,
    '', `PostgreSQL through the service: ${fmt(pgRow.requests / pgbench, 2)}× pgbench's single-row INSERT TPS.`)
}
const at10 = samples.find(([s]) => s >= 10)?.[1] ?? NaN
const at60 = samples.find(([s]) => s >= 60)?.[1] ?? NaN
const atEnd = samples.at(-1)?.[1] ?? NaN
const series = samples.filter(([s], i) => i === samples.length - 1 || Math.round(s) % 10 === 0)
  .map(([s, mib]) => `${fmt(s)} s: ${fmt(mib, 1)}`).join(', ')
// V8 lets its heap grow before a major collection, so RSS saws up and down:
// a leak shows as growth across the whole series, not between two samples.
lines.push('', `Sustained load, SQLite normal, ${SOAK_SECONDS} s: RSS ${fmt(at10, 1)} MiB after 10 s, ${fmt(at60, 1)} MiB after 60 s ` +
  `(${fmt(at60 / at10, 2)}×), ${fmt(atEnd, 1)} MiB at ${fmt(samples.at(-1)?.[0] ?? 0)} s (${fmt(atEnd / at10, 2)}×).`,
'', `RSS in MiB while under load: ${series}.`)

const cpu = cpus()
const report = [
  '# Benchmark results', '',
  `- command: \`npm run bench\`${PG_URL ? ` with PLANT_STORE_TEST_PG_URL=${PG_URL}` : ''} (BENCH_SECONDS=${SECONDS}, BENCH_SOAK_SECONDS=${SOAK_SECONDS})`,
  `- date: ${new Date().toISOString()}`,
  `- machine: ${cpu.length} × ${cpu[0].model}, ${fmt(totalmem() / 2 ** 30, 0)} GiB, Node.js ${process.version}`,
  `- load: autocannon, 50 connections, unique ids, POST /plants with a bearer token; ${taskset ? 'autocannon on core 0, the server on core 1 (taskset)' : 'no taskset: not pinned'}; 2 s warm-up then ${SECONDS} s measured`,
  '', ...lines, ''
].join('\n')
writeFileSync(join(here, '..', '..', 'bench', 'results.md'), report)
process.stdout.write(report)
