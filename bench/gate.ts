// npm run bench:gate [-- <checkout>...]: CI's check that a create has not grown dearer.
// Plant Store on SQLite as it ships (each checkout's build, this one's when none is
// given) against the minimal correct Fastify + better-sqlite3 app, creates only, in
// alternating rounds: Plant Store's requests per CPU-second over the reference's, the
// median of the rounds, must reach FLOOR. Below it the rounds are run once more before
// the gate fails, so that one disturbed run does not fail it.
// BENCH_GATE_SECONDS per load (2), BENCH_GATE_ROUNDS (5): about a minute a run, twice that with the retry.
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CREATE, serviceCommand } from './load.js'
import { commitOf, fmt, median } from './report.js'
import { nodeTarget, runRounds, type Target } from './rounds.js'
import { freshDatabase, removeDatabases } from './stores.js'

/** The ratio a create must reach; docs/performance.md says how it was set. */
export const FLOOR = 0.70
const SECONDS = Number(process.env.BENCH_GATE_SECONDS ?? 2)
const ROUNDS = Number(process.env.BENCH_GATE_ROUNDS ?? 5)
const here = fileURLToPath(new URL('.', import.meta.url))
const checkouts = process.argv.length > 2 ? process.argv.slice(2).map((dir) => resolve(dir)) : [join(here, '..', '..')]
const REFERENCE = 'Fastify + better-sqlite3'

/** A server on a database of its own each round: no round writes into the files an earlier one grew. */
function freshEachRound (name: string, command: string[]): Target {
  return { name, start: async () => await nodeTarget(name, command, { DATABASE_URL: await freshDatabase('sqlite') }).start() }
}

/** Each checkout's median ratio over the rounds of one run, with the rounds' own. */
async function run (): Promise<Array<{ name: string, ratio: number, rounds: number[] }>> {
  // Named by commit, and by folder too when several are compared: two checkouts of one commit stay apart.
  const services = checkouts.map((dir) => freshEachRound(`Plant Store ${commitOf(dir)}${checkouts.length > 1 ? ` (${dir})` : ''}`, serviceCommand(dir)))
  const reference = freshEachRound(REFERENCE, [join(here, 'references', 'server.js')])
  const results = await runRounds([reference, ...services], [CREATE], ROUNDS, SECONDS)
  const theirs = results.of(CREATE.name, REFERENCE)
  return services.map(({ name }) => {
    const rounds = results.of(CREATE.name, name).map((ours, i) => (theirs[i].cpuUs ?? NaN) / (ours.cpuUs ?? NaN))
    return { name, ratio: median(rounds), rounds }
  })
}

const load = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ')[0]
let passed = false
try {
  for (let attempt = 1; attempt <= 2 && !passed; attempt++) {
    const loadAtStart = load()
    const measured = await run()
    for (const { name, ratio, rounds } of measured) {
      process.stdout.write(`bench:gate: POST /plants, ${name} × ${REFERENCE}, req/CPU-s: median ${fmt(ratio, 3)} ` +
        `(rounds ${rounds.map((r) => fmt(r, 3)).join(', ')}; floor ${fmt(FLOOR, 2)}; load average ${loadAtStart} at start)\n`)
    }
    passed = measured.every(({ ratio }) => ratio >= FLOOR)
    if (!passed && attempt === 1) process.stdout.write('bench:gate: below the floor: measuring once more\n')
  }
} finally {
  await removeDatabases()
}
process.stdout.write(`bench:gate: ${passed ? 'passed' : 'failed'}\n`)
process.exitCode = passed ? 0 : 1
