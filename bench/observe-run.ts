// npm run bench:observe: the metrics and tracing rows of `npm run bench` alone,
// written to their own section of bench/results.md.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { RATE } from './load.js'
import { measureObservability, OBSERVE_INSTANCES, OBSERVE_ROUNDS } from './observe.js'
import { fmt, machine, writeSection } from './report.js'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3)
const here = fileURLToPath(new URL('.', import.meta.url))
const started = performance.now()
const loadAtStart = loadavg()[0]
const taskset = spawnSync('taskset', ['-cp', '0', String(process.pid)]).status === 0
const dir = mkdtempSync(join(tmpdir(), 'plant-store-observe-'))
let observe
try {
  observe = await measureObservability({
    dir,
    phase: { port: 28220, taskset, warmUpRequests: 20_000, warmUpSeconds: 2, seconds: SECONDS },
    server: join(here, '..', 'src', 'server.js'),
    baseline: join(here, 'baseline-server.js')
  })
} finally {
  rmSync(dir, { recursive: true, force: true })
}
const report = [
  `- command: \`npm run bench:observe\` (BENCH_SECONDS=${SECONDS}, BENCH_OBSERVE_ROUNDS=${OBSERVE_ROUNDS}, BENCH_OBSERVE_INSTANCES=${OBSERVE_INSTANCES}${RATE > 0 ? `, BENCH_RATE=${RATE}` : ''})`,
  `- date: ${new Date().toISOString()}; whole run ${fmt((performance.now() - started) / 1000)} s`,
  `- machine: ${machine()}; load average (1 min) ${fmt(loadAtStart, 1)} at the start, ${fmt(loadavg()[0], 1)} at the end`,
  `- load: the create scenario of \`npm run bench\` (${taskset ? 'autocannon on core 0, the servers on core 1, ' : ''}50 connections per server${RATE > 0 ? ` sending ${RATE} requests/s in all` : ''}, ` +
    `each server warmed up, then the two servers of a pair loaded at once for ${SECONDS} s); server CPU µs/req is the server process's own \`process.cpuUsage()\` over the window.`,
  '', ...observe.lines
].join('\n')
writeSection(join(here, '..', '..', 'bench', 'results.md'), '## `npm run bench:observe`', report)
process.stdout.write(`${report}\n`)
