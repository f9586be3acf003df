// A server under test and the load on it: the server alone on core 1 (taskset), this
// process and its autocannon on core 0, 50 connections over loopback.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { join, resolve } from 'node:path'
import autocannon from 'autocannon'

// 32 characters: Plant Store warns of a shorter one at every start.
export const TOKEN = 'bench-token-0123456789abcdefghij'
export const AUTH = { authorization: `Bearer ${TOKEN}` }
const CONNECTIONS = 50
// A warm-up counts requests, since V8 optimizes after a number of calls, not a time;
// the cap in seconds bounds it on a machine too busy to answer that many quickly.
const WARM_UP = { requests: 20_000, seconds: 2 }
const TICK_US = 1e6 / Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout || 100)

/** Whether this process could pin itself to core 0, leaving core 1 to the servers. */
export const pinned = spawnSync('taskset', ['-cp', '0', String(process.pid)]).status === 0

export interface Server { child: ChildProcess, url: string }

/** A port free now, for the next server: the OS picks it. */
async function freePort (): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1')
  await once(probe, 'listening')
  const { port } = probe.address() as AddressInfo
  await new Promise((resolve) => probe.close(resolve))
  return port
}

/**
 * Plant Store as `npm start` runs it in the checkout at `root`: its build, with the Node.js
 * options of that checkout's `start` script (node [options] dist/src/server.js).
 */
export function serviceCommand (root: string): string[] {
  const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }
  const words = scripts.start.split(/\s+/)
  if (words[0] !== 'node') throw new Error(`${root}: package.json's start does not run node: ${scripts.start}`)
  return [...words.slice(1, -1), join(resolve(root), words.at(-1) as string)]
}

/** Starts `node ...command` (a script, after any Node.js options) on core 1 with `env` (and PORT, API_TOKENS), and waits until it answers HTTP. */
export async function startServer (command: string[], env: Record<string, string>): Promise<Server> {
  const port = await freePort()
  const node = [process.execPath, ...command]
  const child = spawn(pinned ? 'taskset' : node[0], pinned ? ['-c', '1', ...node] : node.slice(1), {
    env: { PATH: process.env.PATH, NODE_ENV: 'production', HOST: '127.0.0.1', PORT: String(port), API_TOKENS: TOKEN, ...env },
    stdio: ['ignore', 'ignore', 'inherit']
  })
  const url = `http://127.0.0.1:${port}`
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${command.join(' ')} exited with ${child.exitCode}`)
    if (await fetch(`${url}/ready`).then(() => true, () => false)) return { child, url }
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

export async function stopServer (server: Server): Promise<void> {
  if (server.child.exitCode !== null) return
  server.child.kill('SIGTERM')
  await once(server.child, 'exit')
}

/** The server's CPU time so far, user and system, all its threads, in µs (taskset execs node: one pid). */
export function serverCpu (server: Server): number {
  // Fields 14 and 15 of /proc/<pid>/stat, counted after the command name's closing parenthesis.
  const stat = readFileSync(`/proc/${server.child.pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * TICK_US
}

/** What the load sends: one request shape, made afresh for each request when `setup` is given. */
export interface Workload {
  name: string
  method: 'GET' | 'POST'
  path: string
  headers?: Record<string, string>
  setup?: (request: autocannon.Request) => autocannon.Request
  /** Requests per second over all connections; as fast as the server answers when absent. */
  rate?: number
}

// Random ids, as clients choose theirs: each insert lands anywhere in the key's index.
// Below 2^53, which a JSON.parse in the reference apps keeps exact.
const randomId = (): number => 1 + Math.floor(Math.random() * (Number.MAX_SAFE_INTEGER - 1))

export const CREATE: Workload = {
  name: 'POST /plants',
  method: 'POST',
  path: '/plants',
  headers: { 'content-type': 'application/json' },
  setup: (request) => ({ ...request, body: `{"id":${randomId()},"name":"bench plant","tag":"bench"}` })
}

/** GET /plants/{id} of ids drawn at random from 1 to `plants`, which all exist. */
export const getById = (plants: number): Workload => ({
  name: 'GET /plants/{id}',
  method: 'GET',
  path: '/plants/1',
  setup: (request) => ({ ...request, path: `/plants/${1 + Math.floor(Math.random() * plants)}` })
})

export const FIRST_PAGE: Workload = { name: 'GET /plants?limit=20', method: 'GET', path: '/plants?limit=20' }

export interface Result {
  /** Requests answered per second. */
  rate: number
  /** The server's CPU time over the window, divided by the requests answered in it; undefined when not measured. */
  cpuUs?: number
  /** Connection errors, timeouts and answers other than 2xx. */
  failed: number
  /** 2xx answers. */
  ok: number
}

function cannon (server: Server, workload: Workload, limit: { duration: number } | { amount: number }): Promise<autocannon.Result> & { stop: () => void } {
  const { method, path, headers, setup, rate } = workload
  // autocannon calls setupRequest when the key is present, even when undefined.
  const request = { method, path, headers: { ...AUTH, ...headers }, ...(setup && { setupRequest: setup }) }
  // Without a callback autocannon returns its tracker, which is also a promise of the result.
  return autocannon({ url: server.url, connections: CONNECTIONS, requests: [request], ...limit, ...(rate !== undefined && { overallRate: rate }) }) as Promise<autocannon.Result> & { stop: () => void }
}

/** JIT and caches warm, before anything is measured; returns the 2xx answers. */
export async function warmUp (server: Server, workload: Workload): Promise<number> {
  const run = cannon(server, workload, { amount: WARM_UP.requests })
  const timer = setTimeout(() => run.stop(), WARM_UP.seconds * 1000)
  const result = await run
  clearTimeout(timer)
  return result['2xx']
}

/** `workload` from 50 connections for `seconds`, and the server's CPU over the same window. */
export async function measure (server: Server, workload: Workload, seconds: number): Promise<Result> {
  const before = serverCpu(server)
  const result = await cannon(server, workload, { duration: seconds })
  const cpu = serverCpu(server) - before
  const answered = result.requests.total
  return { rate: answered / result.duration, cpuUs: cpu / answered, failed: result.errors + result.non2xx, ok: result['2xx'] }
}
