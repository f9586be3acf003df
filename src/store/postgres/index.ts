import pg from 'pg'
import type { Plant } from '../../../schemas/plant.js'
import { groupCommit, type Waiter } from '../group-commit.js'
import { SILENT, trackOutage, type StoreLogger } from '../outage.js'
import { migrate } from './migrate.js'
import { samePlant, StoreUnavailableError, toPlant, type CreateResult, type PlantRecord, type PlantStore } from '../types.js'

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

// The most creates in one statement: bounds its size and how long its callers wait.
const MAX_BATCH = 1000
const MAX_IN_FLIGHT = 2

// The server cannot be reached or cannot answer now (network errors, SQLSTATE class 08, shutdown,
// too many connections, statement timeout), as opposed to a request it refuses.
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH',
  'ENOTFOUND', 'EAI_AGAIN', '57P01', '57P02', '57P03', '53300', '57014'])
// pg reports a lost connection and its own timeouts by message only.
const UNAVAILABLE_MESSAGE = /^(Connection terminated|timeout exceeded|Query read timeout|Client has encountered a connection error)/

const INSERT = `INSERT INTO plants (id, name, tag)
  SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[]) ON CONFLICT (id) DO NOTHING RETURNING id`
const SELECT_MANY = 'SELECT id, name, tag FROM plants WHERE id = ANY($1::bigint[])'

interface Row { id: string, name: string, tag: string | null }

function isUnavailable (error: Error & { code?: string }): boolean {
  const code = String(error.code)
  return UNAVAILABLE_CODES.has(code) || code.startsWith('08') || UNAVAILABLE_MESSAGE.test(error.message)
}

/**
 * The PlantStore on PostgreSQL: a pool, migrations when it opens, and creates
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

  // Named statements: each connection parses and plans them once, not once per batch.
  const query = <R extends pg.QueryResultRow>(name: string, text: string, values?: unknown[]) =>
    run(() => pool.query<R>({ name, text, values }))

  try {
    await run(() => migrate(pool))
  } catch (error) {
    await pool.end()
    throw error
  }

  /** Commits `plants` with one INSERT (and at most one SELECT) and returns each one's outcome, in order. */
  async function insertBatch (plants: PlantRecord[]): Promise<CreateResult[]> {
    // The first create of an id, in arrival order, is the one that may insert it.
    const first = new Map<string, number>()
    plants.forEach((plant, i) => { if (!first.has(String(plant.id))) first.set(String(plant.id), i) })
    // Ascending ids: batches of several instances then wait on each other's rows in one order, never in a cycle.
    const rows = [...first.values()].map((i) => plants[i]).sort((a, b) => (a.id < b.id ? -1 : 1))
    const inserted = await query<{ id: string }>('plant-store-insert', INSERT, [rows.map((r) => String(r.id)), rows.map((r) => r.name), rows.map((r) => r.tag ?? null)])

    const created = new Set(inserted.rows.map((row) => row.id))
    const stored = new Map<string, Plant>()
    for (const [id, i] of first) if (created.has(id)) stored.set(id, toPlant(plants[i].name, plants[i].tag))
    if (stored.size < first.size) {
      const held = await query<Row>('plant-store-select-many', SELECT_MANY, [[...first.keys()].filter((id) => !created.has(id))])
      for (const row of held.rows) stored.set(row.id, toPlant(row.name, row.tag))
    }
    return plants.map((plant, i) => {
      const id = String(plant.id)
      const holder = stored.get(id) as Plant
      if (created.has(id) && first.get(id) === i) return { outcome: 'created', plant: holder }
      return { outcome: samePlant(holder, plant) ? 'replayed' : 'conflict', plant: holder }
    })
  }

  async function commit (batch: Array<Waiter<PlantRecord, CreateResult>>): Promise<void> {
    try {
      const results = await insertBatch(batch.map((waiter) => waiter.item))
      batch.forEach((waiter, i) => waiter.resolve(results[i]))
    } catch (error) {
      if (batch.length === 1 || error instanceof StoreUnavailableError) {
        for (const waiter of batch) waiter.reject(error)
        return
      }
      // One row the server refuses must not fail the others: each goes alone, in arrival order.
      for (const waiter of batch) await commit([waiter])
    }
  }

  // Two batches in flight: one commits while the next gathers. More would only
  // shrink the batches and multiply the commits (measured with npm run bench).
  const batches = groupCommit({ commit, maxBatch: MAX_BATCH, maxInFlight: Math.min(poolSize, MAX_IN_FLIGHT) })
  let closing: Promise<void> | undefined

  return {
    create (plant: PlantRecord): Promise<CreateResult> {
      return batches.add(plant)
    },

    async get (id: bigint) {
      const { rows } = await query<Row>('plant-store-select', 'SELECT name, tag FROM plants WHERE id = $1', [String(id)])
      return rows.length === 0 ? undefined : toPlant(rows[0].name, rows[0].tag)
    },

    async check () {
      await query('plant-store-ping', 'SELECT 1')
    },

    // Pending and in-flight batches commit first, so every create already called gets its outcome.
    close () {
      closing ??= batches.drain().then(() => {
        ended = true
        return pool.end()
      })
      return closing
    }
  }
}
