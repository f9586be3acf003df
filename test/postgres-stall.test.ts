import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import http from 'node:http'
import t from 'tap'
import { bounded } from './helpers/bounded.js'
import { TOKEN } from './helpers/build.js'
import { freshPostgresUrl, PG_SKIP as skip } from './helpers/postgres.js'
import { startProxy } from './helpers/proxy.js'
import { startServer } from './helpers/server.js'

const TIMEOUT = 1000
const STALL = 8000
const IMPATIENT = 150
// An impatient client gives up after this many ms, before the service's own timeout, and tries again soon after.
const PATIENCE = 250

/** The resident set of a process, in MB. */
function rss (pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return Number(kb?.[1]) / 1024
}

interface Answer { status: number, ms: number, retryAfter?: string }

/** One POST /plants on a connection of its own; `patience` ms, then the client hangs up. */
function post (base: URL, id: number, patience?: number): Promise<Answer | undefined> {
  const body = JSON.stringify({ id, name: 'Stalled' })
  const start = performance.now()
  return new Promise((resolve) => {
    const request = http.request(new URL('/plants', base), {
      method: 'POST',
      agent: false,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }
    }, (response) => {
      response.resume()
      response.on('end', () => resolve({ status: response.statusCode as number, ms: performance.now() - start, retryAfter: response.headers['retry-after'] }))
    })
    request.on('error', () => resolve(undefined))
    if (patience !== undefined) request.setTimeout(patience, () => request.destroy())
    request.end(body)
  })
}

// Measures /health from a process of its own, so that the test's own load does not count.
const PROBE = `
const [url, ms] = process.argv.slice(1)
const http = require('node:http')
const agent = new http.Agent({ keepAlive: true })
const times = []
const end = Date.now() + Number(ms)
function next () {
  if (Date.now() >= end) { process.stdout.write(JSON.stringify(times)); agent.destroy(); return }
  const start = performance.now()
  http.get(url, { agent }, (response) => {
    response.resume()
    response.on('end', () => { times.push(response.statusCode === 200 ? performance.now() - start : Infinity); setTimeout(next, 20) })
  }).on('error', () => { times.push(Infinity); setTimeout(next, 20) })
}
next()
`

function percentile (values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
}

t.test('PostgreSQL stalled under 150 impatient clients: 503 within DATABASE_TIMEOUT, bounded memory, /health at once', { skip }, async (t) => {
  const proxy = await startProxy(t, await freshPostgresUrl(t) as string)
  // The young generation held to 4 MB, as Node.js 20's was: Node.js 24 lets it grow to
  // tens of MB under a burst of allocations (measured here: +50 MB after 8 s of this
  // stall, +34 MB after 20 s, a plateau), which would hide what this test looks for,
  // memory that the stall keeps (a queue that grows with it).
  const server = await startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: proxy.url, DATABASE_TIMEOUT: String(TIMEOUT), HOST: '127.0.0.1' }, ['--max-semi-space-size=4'])
  const base = new URL(server.url)
  const pid = server.child.pid as number

  // Warm: connections, compiled code, the pool.
  let id = 1
  for (let round = 0; round < 5; round++) {
    const answers = await Promise.all(Array.from({ length: IMPATIENT }, () => post(base, id++)))
    t.ok(answers.every((answer) => answer?.status === 200), `warm-up round ${round}: all 200`)
  }
  const before = rss(pid)

  proxy.stall()
  const probe = spawn(process.execPath, ['-e', PROBE, new URL('/health', base).href, String(STALL)], { stdio: ['ignore', 'pipe', 'inherit'] })
  // Listened for now: the probe may end before the clients below are done.
  const probed = new Promise<string>((resolve) => {
    let out = ''
    probe.stdout.on('data', (chunk) => { out += chunk })
    probe.on('close', () => resolve(out))
  })

  const end = performance.now() + STALL
  const statuses = new Map<number, number>()
  const patient: Answer[] = []
  let peak = before
  const sampling = setInterval(() => { peak = Math.max(peak, rss(pid)) }, 250)
  async function impatient (): Promise<void> {
    while (performance.now() < end) {
      const answer = await post(base, id++, PATIENCE)
      if (answer !== undefined) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  async function waits (): Promise<void> {
    while (performance.now() < end) {
      const answer = await post(base, id++)
      if (answer !== undefined) patient.push(answer)
    }
  }
  await Promise.all([...Array.from({ length: IMPATIENT }, impatient), ...Array.from({ length: 5 }, waits)])
  clearInterval(sampling)
  peak = Math.max(peak, rss(pid))

  t.ok(patient.length >= 20, `${patient.length} answers to clients that waited`)
  t.ok(patient.every((answer) => answer.status === 503 && answer.retryAfter === '2'), 'each a 503 with Retry-After')
  const slowest = Math.max(...patient.map((answer) => answer.ms))
  t.ok(slowest < TIMEOUT + 500, `within DATABASE_TIMEOUT, queue included: the slowest in ${Math.round(slowest)} ms`)
  t.notOk(statuses.has(500), `no 500 (answers heard by impatient clients: ${JSON.stringify(Object.fromEntries(statuses))})`)
  t.ok(peak - before < 30, `RSS from ${before.toFixed(0)} MB to a peak of ${peak.toFixed(0)} MB`)
  const health = JSON.parse(await bounded(probed, STALL + 5000, 'the /health probe\'s end')) as number[]
  t.ok(health.length > 100, `${health.length} health checks`)
  // Far inside DATABASE_TIMEOUT, which a /health that waited on the store would take whole: on a
  // host six times slower than usual, the churn of 150 clients' connections alone put p99 at 52 to 61 ms.
  t.ok(percentile(health, 0.99) < TIMEOUT / 10, `/health p99 ${percentile(health, 0.99).toFixed(1)} ms, max ${Math.max(...health).toFixed(1)} ms`)

  await proxy.restore()
  let after: Answer | undefined
  for (let attempt = 0; attempt < 20 && after?.status !== 200; attempt++) {
    after = await post(base, id++)
    if (after?.status !== 200) await new Promise((resolve) => setTimeout(resolve, 100))
  }
  t.equal(after?.status, 200, 'creates commit again once the network is back')
  t.equal(server.child.exitCode, null, 'the service kept running')
})
