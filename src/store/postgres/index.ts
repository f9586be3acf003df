import pg from 'pg'
import { groupCommit } from '../group-commit.js'
import { SILENT, trackOutage, type StoreLogger } from '../outage.js'
import { StoreUnavailableError, type CreateResult, type PlantRecord, type PlantStore, type Write, type WriteResult } from '../types.js'
import { isUnavailable } from './errors.js'
import { migrate } from './migrate.js'
import { plantQueries } from './plants.js'

export type { StoreLogger } from '../outage.js'

export interface PostgresStoreOptions {
  /** A `postgres://` or `postgresql://` connection string. */
  url: string
  /** Connections in the pool, and so the most batches in flight at once. */
  poolSize: number
  /** Longest wait, in ms, for a connection and then for a statement, before a StoreUnavailableError. */
  timeout: number
  /** Told once when the store turns unavailable (warn) and once when it answers again (info). */
  log?: StoreLogger
}

// The most writes in one batch: bounds a statement's size and how long its callers wait.
const MAX_BATCH = 1000
const MAX_IN_FLIGHT = 2

/**
 * The PlantStore on PostgreSQL: a pool, migrations when it opens, and writes
 * committed in batches (group commit), each caller told its own outcome.
 */
export async function openPostgresStore (options: PostgresStoreOptions): Promise<PlantStore> {
  const { url, poolSize, timeout, log = SILENT } = options
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: timeout,
    statement_timeout: timeout,
    query_timeout: timeout,
    keepAlive: true,
    application_name: 'plant-store'
  })
  const outage = trackOutage(log, 'PostgreSQL')
  let ended = false

  const down = (error: Error & { code?: string }): void => outage.down(error.message, error.code)
  // A connection that dies while idle (server restart, network cut) must not crash the process.
  pool.on('error', down)

  async function run<T> (work: () => Promise<T>): Promise<T> {
    if (ended) throw new StoreUnavailableError('the store is closed')
    let result: T
    try {
      result = await work()
    } catch (error) {
      if (!isUnavailable(error as Error)) throw error
      down(error as Error)
      throw new StoreUnavailableError((error as Error).message, { cause: error })
    }
    outage.up()
    return result
  }

  try {
    await run(() => migrate(pool))
  } catch (error) {
    await pool.end()
    throw error
  }

  // Named statements: each connection parses and plans them once, not once per batch.
  const plants = plantQueries((name, text, values) => run(() => pool.query({ name, text, values })))

  // Two batches in flight: one commits while the next gathers. More would only
  // shrink the batches and multiply the commits (measured with npm run bench).
  const writes = groupCommit<Write, WriteResult>({ commit: plants.commit, maxBatch: MAX_BATCH, maxInFlight: Math.min(poolSize, MAX_IN_FLIGHT) })
  let closing: Promise<void> | undefined

  return {
    create (plant: PlantRecord) {
      return writes.add({ op: 'create', plant }) as Promise<CreateResult>
    },

    delete (id: bigint) {
      return writes.add({ op: 'delete', id }) as Promise<boolean>
    },

    get: plants.get,
    list: plants.list,

    async check () {
      await run(() => pool.query({ name: 'plant-store-ping', text: 'SELECT 1' }))
    },

    // Pending and in-flight batches commit first, so every write already called gets its outcome.
    close () {
      closing ??= writes.drain().then(() => {
        ended = true
        return pool.end()
      })
      return closing
    }
  }
}
