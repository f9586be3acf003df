import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'

// 32 characters: a shorter one is warned of at every start.
export const TOKEN = 'bench-token-0123456789abcdefghij'
const CONNECTIONS = 50
// BENCH_RATE: a fixed offered load (requests per second, over all connections) instead
// of as many as the server answers. A server that costs more per request then answers
// as many as the other, so its batches and turns of the event loop are as full.
export const RATE = Number(process.env.BENCH_RATE ?? 0)
const PROBE = fileURLToPath(new URL('cpu-probe.js', import.meta.url))

export interface Server { child: ChildProcess, url: string, startToReadyMs: number }

/** The pid's resident set now (VmRSS) or at its peak (VmHWM), in MiB. */
export function rss (pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1]) / 1024
}

/** Starts a server on core 1 (when taskset exists) with the CPU probe preloaded, and waits for /ready. */
export async function startServer (script: string, env: Record<string, string>, port: number, taskset: boolean): Promise<Server> {
  const node = [process.execPath, '--import', PROBE, script]
  const started = performance.now()
  const child = spawn(taskset ? 'taskset' : node[0], taskset ? ['-c', '1', ...node] : node.slice(1), {
    env: { ...process.env, API_TOKENS: TOKEN, PORT: String(port), LOG_LEVEL: 'warn', NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc']
  })
  const url = `http://127.0.0.1:${port}`
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${script} exited with ${child.exitCode}`)
    const ok = await fetch(`${url}/ready`).then((res) => res.ok, () => false)
    if (ok) return { child, url, startToReadyMs: performance.now() - started }
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}

export async function stopServer (server: Server): Promise<void> {
  server.child.disconnect()
  server.child.kill('SIGTERM')
  await once(server.child, 'exit')
}

/** The server process's CPU time so far (user + system, all its threads), in µs. */
export async function serverCpu (server: Server): Promise<number> {
  const answer = once(server.child, 'message')
  server.child.send('cpu')
  const [{ user, system }] = await answer as [NodeJS.CpuUsage]
  return user + system
}

/** What the load generator sends: one request shape, made afresh for each request when `setup` is given. */
export interface Workload {
  method: 'GET' | 'POST'
  path: string
  headers?: Record<string, string>
  setup?: (request: autocannon.Request) => autocannon.Request
}

const auth = { authorization: `Bearer ${TOKEN}` }
let nextId = 1

/** POST /plants with unique ids. */
export const create: Workload = {
  method: 'POST',
  path: '/plants',
  headers: { 'content-type': 'application/json' },
  setup: (request) => ({ ...request, body: `{"id":${nextId++},"name":"bench plant","tag":"bench"}` })
}

/** GET /plants/{id}, an id drawn at random from 1 to `count`. */
export function getRandom (count: number): Workload {
  return { method: 'GET', path: '/plants/1', setup: (request) => ({ ...request, path: `/plants/${1 + Math.floor(Math.random() * count)}` }) }
}

/** GET of one fixed path, such as a page of the list. */
export function getPath (path: string): Workload {
  return { method: 'GET', path }
}

export interface LoadResult {
  /** Mean of autocannon's per-second counts. */
  requests: number
  p50: number
  p99: number
  errors: number
  non2xx: number
  /** The server's CPU time over the window, divided by the requests completed in it. */
  cpuUsPerRequest: number
}

/**
 * Sends `workload` until `requests` are answered or `maxSeconds` pass: V8 optimizes
 * after a number of calls, not after a time, so a warm-up counts requests; the cap
 * bounds it on a machine busy enough to serve only a few thousand a second.
 */
export async function warmUp (server: Server, workload: Workload, requests: number, maxSeconds: number): Promise<void> {
  // Without a callback autocannon returns its tracker, which is also a promise of the result.
  const run = autocannon({ url: server.url, connections: CONNECTIONS, amount: requests, requests: requestsOf(workload) }) as
    Promise<autocannon.Result> & { stop: () => void }
  const timer = setTimeout(() => run.stop(), maxSeconds * 1000)
  await run
  clearTimeout(timer)
}

function requestsOf (workload: Workload): autocannon.Request[] {
  // autocannon calls setupRequest when the key is present, even when undefined.
  return [{ method: workload.method, path: workload.path, headers: { ...auth, ...workload.headers }, ...(workload.setup && { setupRequest: workload.setup }) }]
}

function cannon (server: Server, workload: Workload, seconds: number): Promise<autocannon.Result> {
  return autocannon({
    url: server.url,
    connections: CONNECTIONS,
    duration: seconds,
    ...(RATE > 0 && { overallRate: RATE }),
    requests: requestsOf(workload)
  })
}

function loadResult (result: autocannon.Result, cpu: number): LoadResult {
  return {
    requests: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    cpuUsPerRequest: cpu / result.requests.total
  }
}

/** Sends `workload` from 50 connections for `seconds`, measuring the server's CPU over the same window. */
export async function load (server: Server, workload: Workload, seconds: number, onTick?: (elapsed: number) => void): Promise<LoadResult> {
  const started = Date.now()
  const timer = onTick === undefined ? undefined : setInterval(() => onTick((Date.now() - started) / 1000), 1000)
  const cpuBefore = await serverCpu(server)
  const result = await cannon(server, workload, seconds)
  const cpu = await serverCpu(server) - cpuBefore
  clearInterval(timer)
  return loadResult(result, cpu)
}

/**
 * Loads every server at once, each from 50 connections of its own, for the same `seconds`:
 * on one core, whatever else the machine does in that window it does to all of them,
 * so their CPU per request can be set against each other. The loads start in the order given.
 */
export async function loadTogether (loads: Array<[Server, Workload]>, seconds: number): Promise<LoadResult[]> {
  const before = await Promise.all(loads.map(([server]) => serverCpu(server)))
  const results = await Promise.all(loads.map(([server, workload]) => cannon(server, workload, seconds)))
  const after = await Promise.all(loads.map(([server]) => serverCpu(server)))
  return results.map((result, i) => loadResult(result, after[i] - before[i]))
}
