import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'
import { samePlant, StoreUnavailableError, toPlant, type CreateResult, type PlantRecord, type PlantStore } from './types.js'

export interface SqliteStoreOptions {
  /** A file path, or `:memory:`. The file's directory is created when missing. */
  path: string
  /** `normal` survives a crash of the process, `full` survives a power loss. */
  synchronous?: 'normal' | 'full'
  /** How long a write waits for another process's lock, in ms. */
  busyTimeout?: number
}

// Versioned migrations: step N brings user_version from N to N + 1.
const MIGRATIONS = [
  'CREATE TABLE plants (id INTEGER PRIMARY KEY, name TEXT NOT NULL, tag TEXT) STRICT'
]

// Errors that say the database cannot answer now, rather than that the request is wrong.
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY|CORRUPT|NOTADB)/

interface Row { name: string, tag: string | null }

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
  const { path, synchronous = 'normal', busyTimeout = 5000 } = options
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

  function run<T> (work: () => T): T {
    try {
      return work()
    } catch (error) {
      const code = (error as { code?: unknown }).code
      if (typeof code === 'string' && UNAVAILABLE.test(code)) throw new StoreUnavailableError(code, { cause: error })
      throw error
    }
  }

  return {
    async create (plant: PlantRecord): Promise<CreateResult> {
      return run(() => {
        // The primary key decides: the insert either takes the id or leaves the row that holds it.
        if (insert.run(plant.id, plant.name, plant.tag ?? null).changes === 1) {
          return { outcome: 'created', plant: toPlant(plant.name, plant.tag) }
        }
        const row = select.get(plant.id) as Row
        const stored = toPlant(row.name, row.tag)
        return { outcome: samePlant(stored, plant) ? 'replayed' : 'conflict', plant: stored }
      })
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
      if (db.open) db.close()
    }
  }
}
