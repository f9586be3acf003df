// npm run bench: how fast Plant Store is against what a user would otherwise run,
// everything measured in this one run (docs/performance.md says how to read it).
//   1. POST /plants, GET /plants/{id} and GET /plants?limit=20 on SQLite and PostgreSQL:
//      Plant Store (dist/src/server.js, as it ships) against bare Fastify (an echo and a
//      Map), the minimal correct Fastify app on the same store, the same app in Express 5
//      on SQLite, and pgbench's single-row INSERT.
//   2. Tracing and metrics: creates with 10% and with every request sampled, our tracer beside
//      the OpenTelemetry SDK's, against untraced; our request histogram beside prom-client's,
//      and METRICS=false, against metrics on.
//   3. The webhook drain: deliveries per second to a receiver on loopback.
// BENCH_SECONDS per load (5), BENCH_ROUNDS (3), BENCH_PLANTS in each store (100,000).
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CREATE, FIRST_PAGE, getById, serviceCommand } from './load.js'
import { hasPgbench, pgbenchTarget } from './pgbench.js'
import { cpuRatio, figures, finishRun, fmt, median, rateRatio, runFacts, table } from './report.js'
import { nodeTarget, runRounds, type Results, type Target } from './rounds.js'
import { freshDatabase, PG_URL, removeDatabases } from './stores.js'
import { ownOrLibrary } from './own-or-library.js'
import { otlpSink } from './tracing.js'
import { measureDrain, startReceiver, type Drain } from './webhooks.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const PLANTS = Number(process.env.BENCH_PLANTS ?? 100_000)
const here = fileURLToPath(new URL('.', import.meta.url))
const SERVICE = serviceCommand(join(here, '..', '..'))
const REFERENCE = [join(here, 'references', 'server.js')]
const withPg = PG_URL !== ''
if (!withPg) process.stderr.write('bench: PLANT_STORE_TEST_PG_URL is not set: SQLite only. Set it to a PostgreSQL URL for the PostgreSQL rows (the bench makes and drops databases there).\n')
if (withPg && !hasPgbench) process.stderr.write('bench: pgbench is not on PATH: no pgbench row.\n')

const WORKLOADS = [CREATE, getById(PLANTS), FIRST_PAGE]
const sqlite = async (): Promise<string> => await freshDatabase('sqlite')
const postgres = async (): Promise<string> => await freshDatabase('postgres')
const lines = runFacts('npm run bench')
const receiver = await startReceiver()
const sink = await otlpSink()
try {
  // 1. Every server of both stores in one set of rounds, bare Fastify among them once.
  const bare = nodeTarget('bare Fastify: an echo, a Map', REFERENCE, { BENCH_PLANTS: String(PLANTS) })
  const stores: Array<{ title: string, targets: Target[] }> = [{
    title: 'SQLite',
    targets: [
      nodeTarget('Plant Store, SQLite', SERVICE, { DATABASE_URL: await sqlite() }, PLANTS),
      nodeTarget('Fastify + better-sqlite3', REFERENCE, { DATABASE_URL: await sqlite() }, PLANTS),
      nodeTarget('Express 5 + better-sqlite3', REFERENCE, { BENCH_APP: 'express', DATABASE_URL: await sqlite() }, PLANTS)
    ]
  }]
  if (withPg) {
    stores.push({
      title: 'PostgreSQL',
      targets: [
        nodeTarget('Plant Store, PostgreSQL', SERVICE, { DATABASE_URL: await postgres() }, PLANTS),
        nodeTarget('Fastify + pg', REFERENCE, { DATABASE_URL: await postgres() }, PLANTS),
        ...hasPgbench ? [pgbenchTarget('pgbench: one INSERT a transaction', await postgres())] : []
      ]
    })
  }
  const results = await runRounds([bare, ...stores.flatMap((s) => s.targets)], WORKLOADS, ROUNDS, SECONDS)
  for (const { title, targets: [plantStore, ...references] } of stores) {
    const rows = WORKLOADS.flatMap(({ name }) => [plantStore, bare, ...references].flatMap((t) => row(results, name, t.name, plantStore.name)))
    lines.push('', `### ${title}, ${fmt(PLANTS)} plants`, '',
      ...table(['request', 'server', 'req/s', 'server CPU µs/req', 'failed', 'Plant Store ×, req/s', 'Plant Store ×, req/CPU-s'], rows))
  }

  // 2. Tracing and metrics on SQLite creates, ours beside the libraries they stand for.
  lines.push(...await ownOrLibrary(SERVICE, sqlite, sink, ROUNDS, SECONDS))

  // 3. The drain, on a new database each round.
  const drains: Array<[string, Drain[]]> = stores.map(({ title }) => [title, []])
  for (let round = 0; round < ROUNDS; round++) {
    for (const [title, list] of drains) list.push(await measureDrain(SERVICE, title === 'SQLite' ? await sqlite() : await postgres(), receiver))
  }
  lines.push('', '### Webhook drain: Plant Store', '', ...table(['store', 'deliveries/s', 'server CPU µs/delivery'],
    drains.map(([title, list]) => [title, fmt(median(list.map((d) => d.rate))), fmt(median(list.map((d) => d.cpuUs)), 1)]), 1))
} finally {
  await sink.close()
  await receiver.close()
  await removeDatabases()
}

finishRun(join(here, '..', '..', 'bench', 'results.md'), '## `npm run bench`', lines)

/** One server's row: its medians, and Plant Store's figures over its own, round by round. */
function row (results: Results, workload: string, name: string, plantStore: string): string[][] {
  const these = results.of(workload, name)
  if (these.length === 0) return []
  const ours = results.of(workload, plantStore)
  return [[workload, name, ...figures(these), ...name === plantStore ? ['', ''] : [fmt(rateRatio(ours, these), 2), fmt(cpuRatio(ours, these), 2)]]]
}
