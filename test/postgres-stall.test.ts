import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import http from 'node:http'
import t from 'tap'
import { bounded } from './helpers/bounded.js'
import { TOKEN } from './helpers/build.js'
import { freshPostgresUrl, PG_SKIP as skip } from './helpers/postgres.js'
import { startProxy } from './helpers/proxy.js'
import { COMPILED_SERVER, NODE_FLAGS, startServer } from './helpers/server.js'

const TIMEOUT = 1000
const ANSWERING = 4000
const STALL = 8000
const IMPATIENT = 150
// An impatient client gives up after this many ms, before the service's own timeout, and tries again soon after.
const PATIENCE = 250

// The semi-space the service's young generation is held to (package.json's start).
const SEMI_SPACE_MB = Number(/^--max-semi-space-size=(\d+)$/.exec(NODE_FLAGS.find((flag) => flag.startsWith('--max-semi-space-size=')) ?? '')?.[1])

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

// Measures /health from a process of its own, so that the test's own load does not count,
// until the time given (ms since the epoch): each answer's time, and when it was asked.
const PROBE = `
const [url, until] = process.argv.slice(1)
const http = require('node:http')
const agent = new http.Agent({ keepAlive: true })
const times = []
function next () {
  if (Date.now() >= Number(until)) { process.stdout.write(JSON.stringify(times)); agent.destroy(); return }
  const at = Date.now()
  const start = performance.now()
  http.get(url, { agent }, (response) => {
    response.resume()
    response.on('end', () => { times.push([at, response.statusCode === 200 ? performance.now() - start : Infinity]); setTimeout(next, 20) })
  }).on('error', () => { times.push([at, Infinity]); setTimeout(next, 20) })
}
next()
`

function percentile (values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
}

t.test('PostgreSQL stalled under 150 impatient clients: 503 within DATABASE_TIMEOUT, bounded memory, /health not waiting on it', { skip }, async (t) => {
  const proxy = await startProxy(t, await freshPostgresUrl(t) as string)
  // The service as it ships: the build of src/ (npm test builds it first), with the Node.js
  // options of package.json's start script, and no TypeScript loader in its memory.
  const server = await startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: proxy.url, DATABASE_TIMEOUT: String(TIMEOUT), HOST: '127.0.0.1' }, [], COMPILED_SERVER)
  const base = new URL(server.url)
  const pid = server.child.pid as number

  // Warm: connections, compiled code, the pool.
  let id = 1
  for (let round = 0; round < 5; round++) {
    const answers = await Promise.all(Array.from({ length: IMPATIENT }, () => post(base, id++)))
    t.ok(answers.every((answer) => answer?.status === 200), `warm-up round ${round}: all 200`)
  }

  // The same clients twice, for ANSWERING ms while the store answers and then for STALL ms
  // while it hangs, with /health probed throughout: the stall is the only difference.
  const started = performance.now()
  const probe = spawn(process.execPath, ['-e', PROBE, new URL('/health', base).href, String(Date.now() + ANSWERING + STALL)], { stdio: ['ignore', 'pipe', 'inherit'] })
  // Listened for now: the probe may end before the clients below are done.
  const probed = new Promise<string>((resolve) => {
    let out = ''
    probe.stdout.on('data', (chunk) => { out += chunk })
    probe.on('close', () => resolve(out))
  })

  async function phase (end: number): Promise<{ statuses: Map<number, number>, patient: Answer[] }> {
    const statuses = new Map<number, number>()
    const patient: Answer[] = []
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
    return { statuses, patient }
  }

  const answering = await phase(started + ANSWERING)
  t.notOk(answering.statuses.has(500), `no 500 while the store answers (${JSON.stringify(Object.fromEntries(answering.statuses))})`)
  t.ok(answering.patient.length > 0 && answering.patient.every((answer) => answer.status === 200), `${answering.patient.length} creates for clients that waited, all 200`)
  const slowestCreate = Math.max(...answering.patient.map((answer) => answer.ms))

  const before = rss(pid)
  let peak = before
  const sampling = setInterval(() => { peak = Math.max(peak, rss(pid)) }, 250)
  proxy.stall()
  const stalled = Date.now()
  const { statuses, patient } = await phase(started + ANSWERING + STALL)
  clearInterval(sampling)
  peak = Math.max(peak, rss(pid))

  t.ok(patient.length >= 20, `${patient.length} answers to clients that waited`)
  t.ok(patient.every((answer) => answer.status === 503 && answer.retryAfter === '2'), 'each a 503 with Retry-After')
  // A write's deadline counts its wait in the queue: a 503 comes one DATABASE_TIMEOUT after
  // the request, not a second one later behind a stuck batch. The median holds that on a
  // busy machine; no answer comes later than two deadlines and the slowest create of the
  // moment before the stall, which was this machine's own delay.
  const times = patient.map((answer) => answer.ms)
  t.ok(percentile(times, 0.5) < 1.5 * TIMEOUT, `one deadline, its wait in the queue included: the median answer in ${Math.round(percentile(times, 0.5))} ms`)
  t.ok(Math.max(...times) < 2 * TIMEOUT + slowestCreate, `the slowest in ${Math.round(Math.max(...times))} ms, the slowest create before the stall in ${Math.round(slowestCreate)} ms`)
  t.notOk(statuses.has(500), `no 500 (answers heard by impatient clients: ${JSON.stringify(Object.fromEntries(statuses))})`)
  // What the stall may take is what the young generation may grow to (package.json's start
  // bounds it) and as much again promoted to the old one before a full collection: a queue
  // that grew with the stall would take more.
  t.ok(peak - before < 4 * SEMI_SPACE_MB, `RSS from ${before.toFixed(0)} MB to a peak of ${peak.toFixed(0)} MB`)

  // /health during the stall against /health while the store answered the same clients,
  // on the same machine a moment before: a /health that waited on the store would take
  // DATABASE_TIMEOUT whole. The stall costs /health something (requests that wait out
  // their deadline survive collections of the young generation, which then take longer),
  // so the bound is a multiple of the 99th percentile before it.
  const health = JSON.parse(await bounded(probed, ANSWERING + STALL + 5000, 'the /health probe\'s end')) as Array<[number, number]>
  const whileAnswering = health.filter(([at]) => at < stalled).map(([, ms]) => ms)
  const whileStalled = health.filter(([at]) => at >= stalled).map(([, ms]) => ms)
  t.ok(whileAnswering.length > 20 && whileStalled.length > 50, `${whileAnswering.length} and ${whileStalled.length} health checks`)
  const p99 = percentile(whileAnswering, 0.99)
  t.ok(percentile(whileStalled, 0.99) < 3 * p99,
    `/health while stalled: p99 ${percentile(whileStalled, 0.99).toFixed(1)} ms, max ${Math.max(...whileStalled).toFixed(1)} ms; ` +
    `while the store answered: p99 ${p99.toFixed(1)} ms, max ${Math.max(...whileAnswering).toFixed(1)} ms`)

  await proxy.restore()
  let after: Answer | undefined
  for (let attempt = 0; attempt < 20 && after?.status !== 200; attempt++) {
    after = await post(base, id++)
    if (after?.status !== 200) await new Promise((resolve) => setTimeout(resolve, 100))
  }
  t.equal(after?.status, 200, 'creates commit again once the network is back')
  t.equal(server.child.exitCode, null, 'the service kept running')
})
