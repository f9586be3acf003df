import { load, rss, startServer, stopServer, warmUp, type LoadResult, type Server, type Workload } from './load.js'
import { fmt } from './report.js'

/** A server to start: the service, or the baseline, on one store. */
export interface Target {
  name: string
  script: string
  env: Record<string, string>
  /** Headers added to every request sent to it (such as a caller's traceparent). */
  headers?: Record<string, string>
  /** Runs once the server is up, before its warm-up (such as subscribing a webhook receiver). */
  setup?: (server: Server) => Promise<void>
  /** Runs after its warm-up and after each of its loads, before any other target's (such as waiting out a webhook backlog). */
  settle?: (server: Server) => Promise<void>
  server?: Server
  /** VmHWM once its phase is over, in MiB. */
  peakRss?: number
}

export interface Row { round: number, workload: string, target: string, result: LoadResult }

export interface PhaseOptions {
  port: number
  taskset: boolean
  /** Each server's warm-up on each workload: until this many requests are answered… */
  warmUpRequests: number
  /** …or this many seconds pass. */
  warmUpSeconds: number
  seconds: number
  /** Times over all workloads and targets, the targets' order reversed every other round (ABBA…). */
  rounds?: number
}

/**
 * Starts every target, then runs each workload on all of them back to back:
 * other work on a shared machine comes and goes, so each ratio pairs a store
 * with a baseline measured moments before, not minutes.
 */
export async function runPhase (targets: Target[], workloads: Array<[string, Workload]>, options: PhaseOptions): Promise<Row[]> {
  const rows: Row[] = []
  try {
    for (const [i, target] of targets.entries()) {
      target.server = await startServer(target.script, target.env, options.port + i, options.taskset)
      await target.setup?.(target.server)
      // JIT and page cache, for every workload before any is measured: one that
      // runs later must not find the code more optimized than one that ran first.
      for (const [, shape] of workloads) await warmUp(target.server, withHeaders(shape, target), options.warmUpRequests, options.warmUpSeconds)
      await target.settle?.(target.server)
    }
    for (let round = 0; round < (options.rounds ?? 1); round++) {
      for (const [workload, shape] of workloads) {
        for (const target of round % 2 === 0 ? targets : [...targets].reverse()) {
          const result = await load(target.server as Server, withHeaders(shape, target), options.seconds)
          await target.settle?.(target.server as Server)
          process.stderr.write(`bench: ${workload}, ${target.name}: ${fmt(result.requests)} req/s, ${fmt(result.cpuUsPerRequest)} µs CPU/req\n`)
          rows.push({ round, workload, target: target.name, result })
        }
      }
    }
  } finally {
    for (const target of targets) {
      if (target.server === undefined) continue
      target.peakRss = rss(target.server.child.pid as number, 'VmHWM')
      await stopServer(target.server)
    }
  }
  return rows
}

function withHeaders (workload: Workload, { headers }: Target): Workload {
  return headers === undefined ? workload : { ...workload, headers: { ...workload.headers, ...headers } }
}

/** The row of `workload` on `target` (in `round`). */
export function find (rows: Row[], workload: string, target: string, round = 0): LoadResult {
  return (rows.find((r) => r.workload === workload && r.target === target && r.round === round) as Row).result
}
