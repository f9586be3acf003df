import { load, loadTogether, rss, startServer, stopServer, warmUp, type LoadResult, type Server, type Workload } from './load.js'
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
  /**
   * runPairs: start each pair's `against` server first (on `port`), its `target` second. The server
   * started first costs more: two identical servers read 0.989 started first and 1.023 started second
   * (three instances each way, 2026-11-27). Flipped from one set of pairs to the next, that falls on both sides alike.
   */
  againstFirst?: boolean
}

/**
 * Starts every target, then runs each workload on all of them back to back:
 * other work on a shared machine comes and goes, so each ratio pairs a store
 * with a baseline measured moments before, not minutes.
 */
export async function runPhase (targets: Target[], workloads: Array<[string, Workload]>, options: PhaseOptions): Promise<Row[]> {
  const rows: Row[] = []
  try {
    await startTargets(targets, workloads, options)
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
    await stopTargets(targets)
  }
  return rows
}

/** Two servers measured at the same time: `target` and the one it is set against. */
export interface Pair { target: Target, against: Target }

export interface PairRow { round: number, pair: Pair, result: LoadResult, reference: LoadResult }

/**
 * Each pair in turn: starts its two servers, then loads both at once (loadTogether) in
 * every round, which of the two starts first flipping every round, and stops them. A
 * pair's ratio then comes from one window at a time, on a core that runs only those two:
 * two identical servers measured so agree within a few percent, where two windows back
 * to back differ by a quarter.
 */
export async function runPairs (pairs: Pair[], workload: Workload, options: PhaseOptions): Promise<PairRow[]> {
  const rows: PairRow[] = []
  for (const pair of pairs) {
    const targets = [pair.target, pair.against]
    const together = (order: Target[]): Promise<LoadResult[]> =>
      loadTogether(order.map((target) => [target.server as Server, withHeaders(workload, target)]), options.seconds)
    try {
      await startTargets(options.againstFirst === true ? [pair.against, pair.target] : targets, [['', workload]], options)
      // Unmeasured: a first window together, which ran slower than the rest for one server or the other.
      await together(targets)
      for (let round = 0; round < (options.rounds ?? 1); round++) {
        const both = round % 2 === 0 ? targets : [pair.against, pair.target]
        const results = await together(both)
        for (const target of both) await target.settle?.(target.server as Server)
        const [result, reference] = round % 2 === 0 ? results : [results[1], results[0]]
        process.stderr.write(`bench: ${pair.target.name}: ${fmt(result.cpuUsPerRequest, 1)} µs CPU/req, ${pair.against.name}: ${fmt(reference.cpuUsPerRequest, 1)}\n`)
        rows.push({ round, pair, result, reference })
      }
    } finally {
      await stopTargets(targets)
    }
  }
  return rows
}

async function startTargets (targets: Target[], workloads: Array<[string, Workload]>, options: PhaseOptions): Promise<void> {
  for (const [i, target] of targets.entries()) {
    target.server = await startServer(target.script, target.env, options.port + i, options.taskset)
    await target.setup?.(target.server)
    // JIT and page cache, for every workload before any is measured: one that
    // runs later must not find the code more optimized than one that ran first.
    for (const [, shape] of workloads) await warmUp(target.server, withHeaders(shape, target), options.warmUpRequests, options.warmUpSeconds)
    await target.settle?.(target.server)
  }
}

async function stopTargets (targets: Target[]): Promise<void> {
  for (const target of targets) {
    if (target.server === undefined) continue
    target.peakRss = rss(target.server.child.pid as number, 'VmHWM')
    await stopServer(target.server)
  }
}

function withHeaders (workload: Workload, { headers }: Target): Workload {
  return headers === undefined ? workload : { ...workload, headers: { ...workload.headers, ...headers } }
}

/** The row of `workload` on `target` (in `round`). */
export function find (rows: Row[], workload: string, target: string, round = 0): LoadResult {
  return (rows.find((r) => r.workload === workload && r.target === target && r.round === round) as Row).result
}
