import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'
import { groupCommit } from '../group-commit.js'
import { SILENT, trackOutage, type StoreLogger } from '../outage.js'
import { StoreUnavailableError, type CreateResult, type PlantRecord, type PlantStore, type Write, type WriteResult } from '../types.js'
import { migrate } from './migrate.js'
import { plantStatements } from './plants.js'

export interface SqliteStoreOptions {
  /** A file path, or `:memory:`. The file's directory is created when missing. */
  path: string
  /** `normal` survives a crash of the process, `full` survives a power loss. */
  synchronous?: 'normal' | 'full'
  /** How long a write waits for another process's lock, in ms. */
  busyTimeout?: number
  /** Told once when the store turns unavailable (warn) and once when it answers again (info). */
  log?: StoreLogger
}

// Errors that say the database cannot answer now, rather than that the request is wrong.
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY|CORRUPT|NOTADB)/

function unavailable (error: unknown): StoreUnavailableError | undefined {
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' && UNAVAILABLE.test(code) ? new StoreUnavailableError(code, { cause: error }) : undefined
}

export function openSqliteStore (options: SqliteStoreOptions): PlantStore {
  const { path, synchronous = 'normal', busyTimeout = 5000, log = SILENT } = options
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const db = new Database(path, { timeout: busyTimeout })
  db.pragma('journal_mode = WAL')
  db.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`)
  migrate(db)

  const plants = plantStatements(db)
  // Ready means writable: take the write lock (waiting up to busyTimeout) and let it go.
  const begin = db.prepare('BEGIN IMMEDIATE')
  const rollback = db.prepare('ROLLBACK')

  const outage = trackOutage(log, 'SQLite')

  function run<T> (work: () => T): T {
    let result: T
    try {
      result = work()
    } catch (error) {
      const cause = unavailable(error)
      if (cause !== undefined) outage.down(cause.message)
      throw cause ?? error
    }
    outage.up()
    return result
  }

  // One transaction for a whole batch: one commit (one fsync with synchronous=full)
  // instead of one per request. Writes run in arrival order, so a create, a delete
  // and a create of one id end as they would alone. A row that fails on its own
  // fails only its statement, so the rest of the batch commits; an unavailable store fails all.
  const commitBatch = db.transaction((batch: Write[]) =>
    batch.map((write): WriteResult | Error => {
      try {
        return plants.write(write)
      } catch (error) {
        // A full disk or an I/O error mid-batch ends the whole transaction: fail it all.
        /* c8 ignore next -- SQLite cannot be made to run out of disk or fail I/O from a test */
        if (unavailable(error) !== undefined) throw error
        return error as Error
      }
    }))

  const writes = groupCommit<Write, WriteResult>({
    maxBatch: 1000,
    // better-sqlite3 is synchronous: one batch at a time, the next gathers meanwhile.
    maxInFlight: 1,
    async commit (batch) {
      let results: Array<WriteResult | Error>
      try {
        results = run(() => commitBatch.immediate(batch.map((waiter) => waiter.item)))
      } catch (error) {
        for (const waiter of batch) waiter.reject(error)
        return
      }
      // Only now, after the commit, does any request hear its outcome.
      results.forEach((result, i) => result instanceof Error ? batch[i].reject(result) : batch[i].resolve(result))
    }
  })

  return {
    create (plant: PlantRecord) {
      return writes.add({ op: 'create', plant }) as Promise<CreateResult>
    },

    delete (id: bigint) {
      return writes.add({ op: 'delete', id }) as Promise<boolean>
    },

    async get (id: bigint) {
      return run(() => plants.get(id))
    },

    async list (query) {
      return run(() => plants.list(query))
    },

    async check () {
      run(() => {
        begin.run()
        rollback.run()
      })
    },

    async close () {
      await writes.drain()
      if (db.open) db.close()
    }
  }
}
