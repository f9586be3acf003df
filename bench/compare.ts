// npm run bench:compare -- <before> <after>: did this change make Plant Store faster?
// Builds the two checkouts (npm run build in each), then measures both builds in
// the same rounds, under the same load, the order flipping every round: creates, GET
// by id and the first page on SQLite and PostgreSQL, tracing against untraced, and the
// webhook drain. Each figure of `after` is set against `before`'s in the same round.
// BENCH_SECONDS per load (5), BENCH_ROUNDS (4), BENCH_PLANTS in each store (100,000).
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CREATE, FIRST_PAGE, getById, serviceCommand } from './load.js'
import { commitOf, cpuRatio, finishRun, fmt, median, medianCpu, medianRate, rateRatio, runFacts, table } from './report.js'
import { nodeTarget, Results, runRounds, type Target } from './rounds.js'
import { freshDatabase, PG_URL, removeDatabases } from './stores.js'
import { otlpSink, SAMPLINGS } from './tracing.js'
import { measureDrain, startReceiver, type Drain } from './webhooks.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4)
const PLANTS = Number(process.env.BENCH_PLANTS ?? 100_000)
const here = fileURLToPath(new URL('.', import.meta.url))
const dirs = process.argv.slice(2)
if (dirs.length !== 2) throw new Error('usage: npm run bench:compare -- <checkout before> <checkout after>')
const builds = dirs.map((dir, i) => {
  if (!existsSync(join(dir, 'node_modules'))) throw new Error(`${dir}: no node_modules; run npm ci there first`)
  execFileSync('npm', ['run', 'build'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] })
  return { label: i === 0 ? 'before' : 'after', commit: commitOf(dir), server: serviceCommand(dir) }
})
type Build = (typeof builds)[number]
const stores: Array<[string, 'sqlite' | 'postgres']> = [['SQLite', 'sqlite'], ...PG_URL === '' ? [] : [['PostgreSQL', 'postgres'] as [string, 'postgres']]]
if (PG_URL === '') process.stderr.write('bench: PLANT_STORE_TEST_PG_URL is not set: SQLite only.\n')

const WORKLOADS = [CREATE, getById(PLANTS), FIRST_PAGE]
const at = (name: string, build: Build): string => `${name} @ ${build.label}`
/** Both builds' medians, and after's figures over before's, round by round: req/s, and requests per CPU-second. */
function compared (results: Results, workload: string, name: string): string[] {
  const [b, a] = builds.map((build) => results.of(workload, at(name, build)))
  return [medianRate(b), medianRate(a), fmt(rateRatio(a, b), 3), medianCpu(b), medianCpu(a), fmt(cpuRatio(a, b), 3)]
}

const lines = runFacts(`npm run bench:compare -- ${dirs.join(' ')}`, `before ${builds[0].commit}, after ${builds[1].commit}`)
const receiver = await startReceiver()
const sink = await otlpSink()
try {
  // Both builds of each server side by side, so that the flipped order of a round puts after first.
  const storeTargets: Target[] = []
  for (const [store, kind] of stores) {
    for (const build of builds) storeTargets.push(nodeTarget(at(store, build), build.server, { DATABASE_URL: await freshDatabase(kind) }, PLANTS))
  }
  const results = await runRounds(storeTargets, WORKLOADS, ROUNDS, SECONDS)
  const tracingTargets: Target[] = []
  for (const [i, [sampling, env]] of SAMPLINGS.entries()) {
    for (const build of builds) {
      tracingTargets.push(nodeTarget(at(sampling, build), build.server, { DATABASE_URL: await freshDatabase('sqlite'), ...env(sink.url, `${build.label}-${i}`) }))
    }
  }
  await runRounds(tracingTargets, [CREATE], ROUNDS, SECONDS, results)
  const samplings = SAMPLINGS.map(([name]) => name)
  lines.push('', '### Before and after', '', ...table(
    ['request', 'server', 'before req/s', 'after req/s', 'after ×, req/s', 'before CPU µs/req', 'after CPU µs/req', 'after ×, req/CPU-s'], [
      ...WORKLOADS.flatMap(({ name }) => stores.map(([store]) => [name, store, ...compared(results, name, store)])),
      ...samplings.map((sampling) => [CREATE.name, `SQLite, ${sampling}`, ...compared(results, CREATE.name, sampling)])
    ]))

  const ofUntraced = (sampling: string, build: Build): string[] => {
    const [these, untraced] = [sampling, samplings[0]].map((name) => results.of(CREATE.name, at(name, build)))
    return [fmt(rateRatio(these, untraced), 3), fmt(cpuRatio(these, untraced), 3)]
  }
  lines.push('', '### Tracing against untraced: POST /plants, SQLite', '', ...table(
    ['tracing', 'before: × untraced, req/s', 'before: × untraced, req/CPU-s', 'after: × untraced, req/s', 'after: × untraced, req/CPU-s'],
    samplings.slice(1).map((sampling) => [sampling, ...builds.flatMap((build) => ofUntraced(sampling, build))]), 1))

  // The drain: each round both builds on new databases, the order flipping.
  const drains = new Map<string, Drain[]>()
  for (let round = 0; round < ROUNDS; round++) {
    for (const [store, kind] of stores) {
      for (const build of round % 2 === 0 ? builds : [...builds].reverse()) {
        const drain = await measureDrain(build.server, await freshDatabase(kind), receiver)
        drains.set(at(store, build), [...drains.get(at(store, build)) ?? [], drain])
      }
    }
  }
  lines.push('', '### Webhook drain', '', ...table(['store', 'before deliveries/s', 'after deliveries/s', 'after ×'], stores.map(([store]) => {
    const [b, a] = builds.map((build) => drains.get(at(store, build)) ?? [])
    return [store, fmt(median(b.map((d) => d.rate))), fmt(median(a.map((d) => d.rate))), fmt(median(a.map((d, round) => d.rate / b[round].rate)), 3)]
  }), 1))
} finally {
  await sink.close()
  await receiver.close()
  await removeDatabases()
}

finishRun(join(here, '..', '..', 'bench', 'results.md'), '## `npm run bench:compare`', lines)
