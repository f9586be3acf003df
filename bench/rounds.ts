// The method both commands share: in each round every target is started afresh and
// warmed up on every workload, then each workload runs on every target in turn. The
// order of starts and loads flips every round, so that neither the start order nor the
// drift of a shared machine favours one target; ratios are taken within a round.
import { measure, startServer, stopServer, warmUp, type Result, type Server, type Workload } from './load.js'
import { fillPlants } from './stores.js'

export interface Instance {
  /** Where a server instance answers. */
  url?: string
  warmUp: (workload: Workload) => Promise<unknown>
  measure: (workload: Workload, seconds: number) => Promise<Result>
  stop: () => Promise<void>
}

export interface Target {
  name: string
  /** The workloads it serves, by name; all of them when absent. */
  serves?: string[]
  /** Once, before the first round (such as filling its database). */
  prepare?: () => Promise<void>
  start: () => Promise<Instance>
  /** 2xx answers over every round, warm-ups included. */
  answered?: number
}

/** A Node.js server: `command` (a script, after any Node.js options) with `env`; its database (DATABASE_URL) filled with `plants` plants once it has made its tables. */
export function nodeTarget (name: string, command: string[], env: Record<string, string>, plants = 0): Target {
  const instance = (server: Server): Instance => ({
    url: server.url,
    warmUp: async (workload) => { target.answered = (target.answered ?? 0) + await warmUp(server, workload) },
    measure: async (workload, seconds) => {
      const result = await measure(server, workload, seconds)
      target.answered = (target.answered ?? 0) + result.ok
      return result
    },
    stop: () => stopServer(server)
  })
  const target: Target = {
    name,
    prepare: plants === 0
      ? undefined
      : async () => {
        await stopServer(await startServer(command, env))
        await fillPlants(env.DATABASE_URL, plants)
      },
    start: async () => instance(await startServer(command, env))
  }
  return target
}

/** Each workload's results on each target, one per round. */
export class Results {
  private readonly rows = new Map<string, Result[]>()
  add (workload: string, target: string, result: Result): void {
    const key = `${workload}\n${target}`
    this.rows.set(key, [...this.rows.get(key) ?? [], result])
  }

  of (workload: string, target: string): Result[] {
    return this.rows.get(`${workload}\n${target}`) ?? []
  }
}

export async function runRounds (targets: Target[], workloads: Workload[], rounds: number, seconds: number, results = new Results()): Promise<Results> {
  for (const target of targets) await target.prepare?.()
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? targets : [...targets].reverse()
    const running: Array<[Target, Instance]> = []
    const served = (target: Target): Workload[] => workloads.filter((w) => target.serves?.includes(w.name) ?? true)
    try {
      for (const target of order) running.push([target, await target.start()])
      for (const [target, instance] of running) for (const workload of served(target)) await instance.warmUp(workload)
      for (const workload of workloads) {
        for (const [target, instance] of running.filter(([t]) => served(t).includes(workload))) {
          const result = await instance.measure(workload, seconds)
          results.add(workload.name, target.name, result)
          process.stderr.write(`bench: round ${round + 1}, ${workload.name}, ${target.name}: ${Math.round(result.rate)} req/s` +
            `${result.cpuUs === undefined ? '' : `, ${result.cpuUs.toFixed(1)} µs CPU/req`}\n`)
        }
      }
    } finally {
      for (const [, instance] of running) await instance.stop()
    }
  }
  return results
}
