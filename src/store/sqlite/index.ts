import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'
import { groupCommit, type Waiter } from '../group-commit.js'
import { SILENT, trackOutage, type StoreLogger } from '../outage.js'
import { samePlant, StoreUnavailableError, toPlant, type CreateResult, type PlantRecord, type PlantStore } from '../types.js'

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

// Versioned migrations: step N brings user_version from N to N + 1.
const MIGRATIONS = [
  'CREATE TABLE plants (id INTEGER PRIMARY KEY, name TEXT NOT NULL, tag TEXT) STRICT'
]

// Errors that say the database cannot answer now, rather than that the request is wrong.
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY|CORRUPT|NOTADB)/

interface Row { name: string, tag: string | null }

function unavailable (error: unknown): StoreUnavailableError | undefined {
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' && UNAVAILABLE.test(code) ? new StoreUnavailableError(code, { cause: error }) : undefined
}

function migrate (db: Database.Database): void {
  // IMMEDIATE takes the write lock first, so instances starting together migrate one at a time.
  db.transaction(() => {
    const version = db.pragma('user_version', { simple: true }) as number
    if (version > MIGRATIONS.length) {
      throw new Error(`the database schema is version ${version}, newer than this build's ${MIGRATIONS.length}`)
    }
    for (const step of MIGRATIONS.slice(version)) db.exec(step)
    db.pragma(`user_version = ${MIGRATIONS.length}`)
  }).immediate()
}

export function openSqliteStore (options: SqliteStoreOptions): PlantStore {
  const { path, synchronous = 'normal', busyTimeout = 5000, log = SILENT } = options
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const db = new Database(path, { timeout: busyTimeout })
  db.pragma('journal_mode = WAL')
  db.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`)
  migrate(db)

  const insert = db.prepare<[bigint, string, string | null]>('INSERT INTO plants (id, name, tag) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING')
  const select = db.prepare<[bigint], Row>('SELECT name, tag FROM plants WHERE id = ?')
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

  // The primary key decides: the insert either takes the id or leaves the row that holds it.
  function createOne (plant: PlantRecord): CreateResult {
    if (insert.run(plant.id, plant.name, plant.tag ?? null).changes === 1) {
      return { outcome: 'created', plant: toPlant(plant.name, plant.tag) }
    }
    const row = select.get(plant.id) as Row
    const stored = toPlant(row.name, row.tag)
    return { outcome: samePlant(stored, plant) ? 'replayed' : 'conflict', plant: stored }
  }

  // One transaction for a whole batch: one commit (one fsync with synchronous=full)
  // instead of one per request. A row that fails on its own fails only its
  // statement, so the rest of the batch commits; an unavailable store fails all.
  const commitBatch = db.transaction((batch: Array<Waiter<PlantRecord, CreateResult>>) =>
    batch.map(({ item }): CreateResult | Error => {
      try {
        return createOne(item)
      } catch (error) {
        // A full disk or an I/O error mid-batch ends the whole transaction: fail it all.
        /* c8 ignore next -- SQLite cannot be made to run out of disk or fail I/O from a test */
        if (unavailable(error) !== undefined) throw error
        return error as Error
      }
    }))

  const writes = groupCommit<PlantRecord, CreateResult>({
    maxBatch: 1000,
    // better-sqlite3 is synchronous: one batch at a time, the next gathers meanwhile.
    maxInFlight: 1,
    async commit (batch) {
      let results: Array<CreateResult | Error>
      try {
        results = run(() => commitBatch.immediate(batch))
      } catch (error) {
        for (const waiter of batch) waiter.reject(error)
        return
      }
      // Only now, after the commit, does any request hear its outcome.
      results.forEach((result, i) => result instanceof Error ? batch[i].reject(result) : batch[i].resolve(result))
    }
  })

  return {
    create (plant: PlantRecord): Promise<CreateResult> {
      return writes.add(plant)
    },

    async get (id: bigint) {
      const row = run(() => select.get(id))
      return row === undefined ? undefined : toPlant(row.name, row.tag)
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
