import type Database from 'better-sqlite3'

interface Read {
  work: () => unknown
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

export interface ReadTurns {
  /** Runs `work` after this turn of the event loop, in one read transaction with the turn's other reads. */
  add<T>(work: () => T): Promise<T>
  /** Runs the reads waiting now (before the database closes). */
  flush (): void
}

/** The reads that arrive in one turn of the event loop run together after it, in one read transaction. */
export function readTurns (db: Database.Database, run: <T>(work: () => T) => T): ReadTurns {
  let waiting: Read[] = []

  function settle ({ work, resolve, reject }: Read): void {
    try {
      resolve(run(work))
    } catch (error) {
      reject(error)
    }
  }

  const together = db.transaction((turn: Read[]) => { turn.forEach(settle) })

  function flush (): void {
    const turn = waiting
    waiting = []
    if (turn.length < 2) return turn.forEach(settle)
    try {
      run(() => together(turn))
    /* c8 ignore next 4 -- the reads have settled, so only the end of the transaction failed: SQLite
       rolls a read back on its own on an I/O error or out of memory, which no test can make of a read */
    } catch (error) {
      for (const read of turn) read.reject(error)
    }
  }

  return {
    add<T>(work: () => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        // setImmediate runs after the poll phase: every request read in this turn joins.
        if (waiting.push({ work, resolve: resolve as (value: unknown) => void, reject }) === 1) setImmediate(flush)
      })
    },
    flush
  }
}
