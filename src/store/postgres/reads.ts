import type { Plant } from '../../../schemas/plant.js'

interface Read {
  id: string
  resolve: (plant: Plant | undefined) => void
  reject: (error: unknown) => void
}

export interface ReadTurns {
  /** The plant of `id`, looked up after this turn of the event loop in one statement with the turn's other gets. */
  get (id: bigint): Promise<Plant | undefined>
  /** Sends the gets waiting now, and resolves once every get sent so far has its answer (before the pool ends). */
  drain (): Promise<void>
}

// The most ids in one statement: bounds its size and the plan's work; a larger turn is split.
const MAX_IDS = 1000

/** The gets that arrive in one turn of the event loop are looked up together after it, in one statement. */
export function readTurns (select: (ids: string[]) => Promise<Map<string, Plant>>): ReadTurns {
  let waiting: Read[] = []
  const inFlight = new Set<Promise<void>>()

  function send (reads: Read[]): void {
    const done: Promise<void> = select([...new Set(reads.map((read) => read.id))]).then(
      (found) => { for (const read of reads) read.resolve(found.get(read.id)) },
      (error: unknown) => { for (const read of reads) read.reject(error) }
    ).then(() => { inFlight.delete(done) })
    inFlight.add(done)
  }

  function flush (): void {
    const turn = waiting
    waiting = []
    for (let start = 0; start < turn.length; start += MAX_IDS) send(turn.slice(start, start + MAX_IDS))
  }

  return {
    get (id: bigint): Promise<Plant | undefined> {
      return new Promise((resolve, reject) => {
        const read = { id: String(id), resolve, reject }
        // The server refuses a whole statement for one id beyond int64 (22003).
        if (BigInt.asIntN(64, id) !== id) return send([read])
        // setImmediate runs after the poll phase: every request read in this turn joins.
        if (waiting.push(read) === 1) setImmediate(flush)
      })
    },

    async drain (): Promise<void> {
      flush()
      await Promise.all(inFlight)
    }
  }
}
