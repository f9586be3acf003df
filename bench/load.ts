import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import autocannon from 'autocannon'

export const TOKEN = 'bench-token'
const CONNECTIONS = 50

export interface Server { child: ChildProcess, url: string, startToReadyMs: number }

/** The pid's resident set now (VmRSS) or at its peak (VmHWM), in MiB. */
export function rss (pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1]) / 1024
}

/** Starts a server on core 1 (when taskset exists) and waits for /ready. */
export async function startServer (script: string, env: Record<string, string>, port: number, taskset: boolean): Promise<Server> {
  const args = taskset ? ['-c', '1', process.execPath, script] : [script]
  const started = performance.now()
  const child = spawn(taskset ? 'taskset' : process.execPath, args, {
    env: { ...process.env, API_TOKENS: TOKEN, PORT: String(port), LOG_LEVEL: 'warn', NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'ignore', 'inherit']
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
  server.child.kill('SIGTERM')
  await once(server.child, 'exit')
}

export interface LoadResult {
  requests: number
  p50: number
  p99: number
  errors: number
  non2xx: number
}

let nextId = 1

/** POSTs unique plants from 50 connections for `seconds`. */
export async function load (url: string, seconds: number, onTick?: (elapsed: number) => void): Promise<LoadResult> {
  const started = Date.now()
  const timer = onTick === undefined ? undefined : setInterval(() => onTick((Date.now() - started) / 1000), 1000)
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [{
      method: 'POST',
      path: '/plants',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      setupRequest: (request) => ({ ...request, body: `{"id":${nextId++},"name":"bench plant","tag":"bench"}` })
    }]
  })
  clearInterval(timer)
  return {
    requests: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx
  }
}
