// npm run bench:features: what each default feature costs a create, alone, on against
// off, as a share of the floor's CPU per request (bare Fastify, bench/floor-server.ts),
// all measured in one run. Written to its own section of bench/results.md.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { create, RATE } from './load.js'
import { find, runPhase, type Target } from './phase.js'
import { fmt, machine, median, writeSection } from './report.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const here = fileURLToPath(new URL('.', import.meta.url))
const started = performance.now()
const loadAtStart = loadavg()[0]
const taskset = spawnSync('taskset', ['-cp', '0', String(process.pid)]).status === 0
const dir = mkdtempSync(join(tmpdir(), 'plant-store-features-'))

const CREATE = 'POST /plants, unique ids'
const FLOOR = 'floor: bare Fastify, bearer auth, schemas, a Map'
const DEFAULTS = 'the service, the bench\'s settings'
const ORIGIN = 'https://app.example'
// Each feature on and off: the bench's settings are one of the two (`reference`), `env` makes the other.
const FEATURES: Array<{ feature: string, on: string, off: string, env: Record<string, string>, reference: 'on' | 'off' }> = [
  { feature: 'metrics (request counts and durations)', on: 'METRICS=true (default)', off: 'METRICS=false', env: { METRICS: 'false' }, reference: 'on' },
  { feature: 'load shedding', on: 'MAX_EVENT_LOOP_DELAY=1000 (default)', off: 'MAX_EVENT_LOOP_DELAY=0', env: { MAX_EVENT_LOOP_DELAY: '0' }, reference: 'on' },
  { feature: 'the access log (a line per request)', on: 'LOG_LEVEL=info (default)', off: 'LOG_LEVEL=warn (the bench\'s)', env: { LOG_LEVEL: 'info' }, reference: 'off' },
  { feature: 'the per-token rate limit, when set', on: 'RATE_LIMIT_MAX=1000000000', off: 'unset (default)', env: { RATE_LIMIT_MAX: '1000000000' }, reference: 'off' },
  { feature: 'CORS, when configured (requests from an allowed origin)', on: `CORS_ORIGINS=${ORIGIN}`, off: 'unset (default)', env: { CORS_ORIGINS: ORIGIN }, reference: 'off' }
]
const changed = (feature: string): string => `the service, ${feature} ${FEATURES.find((f) => f.feature === feature)?.reference === 'on' ? 'off' : 'on'}`

const server = join(here, '..', 'src', 'server.js')
const db = (name: string): Record<string, string> => ({ DATABASE_URL: `sqlite:${join(dir, `${name}.db`)}` })
// Every request comes from the allowed origin, to every server: the others ignore the header.
const headers = { origin: ORIGIN }
const targets: Target[] = [
  { name: FLOOR, script: join(here, 'floor-server.js'), env: {}, headers },
  { name: DEFAULTS, script: server, env: db('defaults'), headers },
  ...FEATURES.map(({ feature, env }, i): Target => ({ name: changed(feature), script: server, env: { ...db(`feature-${i}`), ...env }, headers }))
]
let rows
try {
  rows = await runPhase(targets, [[CREATE, create]], { port: 28260, taskset, warmUpRequests: 20_000, warmUpSeconds: 2, seconds: SECONDS, rounds: ROUNDS })
} finally {
  rmSync(dir, { recursive: true, force: true })
}

const rounds = Array.from({ length: ROUNDS }, (_, round) => round)
const cpu = (target: string, round: number): number => find(rows, CREATE, target, round).cpuUsPerRequest
const floorCpu = rounds.map((round) => cpu(FLOOR, round))
const lines = [
  `- command: \`npm run bench:features\` (BENCH_SECONDS=${SECONDS}, BENCH_ROUNDS=${ROUNDS}${RATE > 0 ? `, BENCH_RATE=${RATE}` : ''})`,
  `- date: ${new Date().toISOString()}; whole run ${fmt((performance.now() - started) / 1000)} s`,
  `- machine: ${machine()}; load average (1 min) ${fmt(loadAtStart, 1)} at the start, ${fmt(loadavg()[0], 1)} at the end`,
  `- load: the create scenario of \`npm run bench\` (${taskset ? 'autocannon on core 0, the servers on core 1, ' : ''}50 connections${RATE > 0 ? ` sending ${RATE} requests/s in all` : ''}, ` +
    `every request with \`Origin: ${ORIGIN}\`), SQLite normal, the bench's settings otherwise (\`LOG_LEVEL=warn\`, \`NODE_ENV=production\`); ` +
    `${targets.length} servers, ${ROUNDS} rounds of ${SECONDS} s each, the order flipping every round. The floor spent ${fmt(median(floorCpu), 1)} µs per create ` +
    `(${floorCpu.map((v) => fmt(v, 1)).join(', ')}); the service with the bench's settings ${fmt(median(rounds.map((r) => cpu(DEFAULTS, r))), 1)}.`,
  '',
  '| feature | on | off | CPU µs/create, on | off | on − off, share of the floor\'s CPU per create | each round |',
  '|---|---|---|---:|---:|---:|---|',
  ...FEATURES.map(({ feature, on, off, reference }) => {
    const [onName, offName] = reference === 'on' ? [DEFAULTS, changed(feature)] : [changed(feature), DEFAULTS]
    const share = rounds.map((r) => (cpu(onName, r) - cpu(offName, r)) / floorCpu[r])
    const pct = (v: number): string => `${v < 0 ? '−' : ''}${fmt(Math.abs(100 * v), 1)}%`
    return `| ${feature} | ${on} | ${off} | ` +
      `${fmt(median(rounds.map((r) => cpu(onName, r))), 1)} | ${fmt(median(rounds.map((r) => cpu(offName, r))), 1)} | ${pct(median(share))} | ${share.map(pct).join(', ')} |`
  })
].join('\n')
writeSection(join(here, '..', '..', 'bench', 'results.md'), '## `npm run bench:features`', lines)
process.stdout.write(`${lines}\n`)
