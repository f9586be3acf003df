// src/store/postgres: the PostgreSQL adapter of the store port, a file per concern.

import pg from 'pg'
import { withDeadline } from '../deadline.js'
import { groupCommit, stillWaiting, type Waiter } from '../group-commit.js'
import type { StoreObserver } from '../observer.js'
import type { FastifyBaseLogger } from 'fastify'
import { SILENT, trackOutage, type Access } from '../outage.js'
import { StoreUnavailableError, type ChangeOptions, type CreateResult, type PlantChange, type PlantRecord, type PlantStore, type UpdateResult, type Write, type WriteOptions, type WriteResult } from '../types.js'
import { isLostConnection, isUnavailable, readOnly } from './errors.js'
import { postgresFeed } from './feed.js'
import { cursorKey, migrate } from './migrate.js'
import type { Transaction } from './outbox.js'
import { plantQueries, plantsById } from './plants.js'
import type { Query } from './query.js'
import { readTurns } from './reads.js'
import { readyCheck } from '../ready-check.js'
import { samePages } from '../same-pages.js'
import { inTransaction } from './transaction.js'
import { postgresWebhooks } from './webhooks.js'

export type { StoreLogger } from '../outage.js'

export interface PostgresStoreOptions {
  /** A `postgres://` or `postgresql://` connection string. */
  url: string
  /** Connections in the pool, and so the most batches in flight at once. */
  poolSize: number
  /** The longest a call waits, in ms, queue, connection and statement included, before a StoreUnavailableError. */
  timeout: number
  /** Writes waiting for a batch at most; beyond it, a write fails at once. */
  queueLimit?: number
  /** Told once when the store turns unavailable (warn) and once when it answers again (info). */
  log?: Pick<FastifyBaseLogger, 'info' | 'warn'>
  /** Hears of the write queue, each batch and outages (metrics, traces). */
  observer?: StoreObserver
  /** Whether the change feed is on (EVENTS_RETENTION > 0): every change then writes its event, in commit order. */
  feed?: boolean
}

// Ready means writable: the server is not a standby and the session is not read-only.
const WRITABLE = "SELECT pg_is_in_recovery() OR current_setting('transaction_read_only')::boolean AS read_only"

// Once writes have failed, ready means that one succeeds again.
const HEADROOM = "INSERT INTO plants (id, name) SELECT (random() * 9.2e18)::bigint, string_agg(md5(random()::text), '') FROM generate_series(1, 4096) ON CONFLICT (id) DO NOTHING"

/** Whether a statement sent as a write changed a row, and so shows that writes succeed. */
const changedRows = (result: pg.QueryResult): boolean => result.rowCount !== 0

// How much later than the server's statement_timeout the client gives up on an answer, in ms.
const QUERY_TIMEOUT_MARGIN = 1000

// The most writes in one batch: bounds a statement's size and how long its callers wait.
const MAX_BATCH = 1000
const MAX_IN_FLIGHT = 2

/** The PlantStore on PostgreSQL: a pool, migrations when it opens, and writes committed in batches. */
export async function openPostgresStore (options: PostgresStoreOptions): Promise<PlantStore> {
  const { url, poolSize, timeout, queueLimit = 10_000, log = SILENT, observer, feed = false } = options
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: timeout,
    // The server cancels a slow statement first and the connection stays usable.
    statement_timeout: timeout,
    query_timeout: timeout + QUERY_TIMEOUT_MARGIN,
    keepAlive: true,
    application_name: 'plant-store'
  })
  const outage = trackOutage(log, 'PostgreSQL', observer)
  let ended = false

  const lost = (error: Error & { code?: string }): void => outage.down('read', error.message, error.code)
  // A connection that dies while idle (server restart, network cut) must not crash the process.
  pool.on('error', lost)

  /** The error to throw for `error`: a StoreUnavailableError when the store cannot answer now. */
  function failure (access: Access, error: unknown): unknown {
    if (error instanceof StoreUnavailableError) {
      outage.down(access, error.message)
      return error
    }
    if (!isUnavailable(error as Error)) return error
    outage.down(access, (error as Error).message, (error as Error & { code?: string }).code)
    return new StoreUnavailableError((error as Error).message, { cause: error })
  }

  async function run<T> (access: Access, work: () => Promise<T>, wrote: (result: T) => boolean = () => true): Promise<T> {
    if (ended) throw new StoreUnavailableError('the store is closed')
    let result: T
    try {
      result = await withDeadline(work(), timeout)
    } catch (error) {
      throw failure(access, error)
    }
    // A write that changed no row wrote nothing (a claim that found nothing due succeeds on a full disk).
    outage.up(access === 'write' && !wrote(result) ? 'read' : access)
    return result
  }

  let key: Buffer
  try {
    await run('write', () => migrate(pool, feed))
    key = await run('write', () => cursorKey(pool))
  } catch (error) {
    await pool.end()
    throw error
  }

  // Named statements: each connection parses and plans them once, not once per batch.
  const send: Query = (name, text, values) => pool.query({ name, text, values })
    .catch((error: Error) => isLostConnection(error) ? pool.query({ name, text, values }) : Promise.reject(error))
  const read: Query = (name, text, values) => run('read', () => send(name, text, values))
  const write: Query = (name, text, values) => run('write', () => pool.query({ name, text, values }), changedRows)
  const transaction: Transaction = (work, wrote) => run('write', () => inTransaction(pool, work, lost), wrote)
  const webhooks = postgresWebhooks({ url, timeout, log, cursorKey: key, query: write, read, transaction, feed })
  const plants = plantQueries({ read }, webhooks.insert, webhooks.notice)
  // The gets of one turn share one statement; each caller keeps its own deadline and outage note through `run`.
  const reads = readTurns((ids) => plantsById(send, ids))

  // A batch takes its connection first (pg waits connectionTimeoutMillis at most).
  async function commit (batch: Array<Waiter<Write, WriteResult>>): Promise<void> {
    let client: pg.PoolClient
    try {
      if (ended) throw new StoreUnavailableError('the store is closed')
      client = await pool.connect()
    } catch (error) {
      const reason = failure('write', error)
      for (const waiter of batch) waiter.reject(reason)
      return
    }
    // A connection lost while checked out emits 'error' on it: heard here, or it would end the process.
    client.on('error', lost)
    let broken: Error | undefined
    const on: Query = async (name, text, values) => {
      try {
        return await run('write', () => client.query({ name, text, values }), changedRows)
      } catch (error) {
        // A statement cut off (timeout, lost connection) may still hold the connection: it is dropped.
        if (error instanceof StoreUnavailableError) broken = error
        throw error
      }
    }
    try {
      await plants.commit(batch.filter(stillWaiting), on)
    } finally {
      client.off('error', lost)
      client.release(broken)
    }
  }

  // Two batches in flight: one commits while the next gathers.
  const writes = groupCommit<Write, WriteResult>({
    commit,
    maxBatch: MAX_BATCH,
    maxInFlight: Math.min(poolSize, MAX_IN_FLIGHT),
    timeout,
    maxQueue: queueLimit,
    observer
  })
  let closing: Promise<void> | undefined

  return {
    webhooks: webhooks.store,
    events: feed ? postgresFeed(read, transaction, webhooks.onCommits) : undefined,
    cursorKey: key,

    create (plant: PlantRecord, options?: WriteOptions) {
      return writes.add({ op: 'create', plant }, options) as Promise<CreateResult>
    },

    update (id: bigint, change: PlantChange, options: ChangeOptions = {}) {
      return writes.add({ op: 'update', id, change, ifMatch: options.ifMatch, ifNoneMatch: options.ifNoneMatch }, options) as Promise<UpdateResult | undefined>
    },

    delete (id: bigint, options: ChangeOptions = {}) {
      return writes.add({ op: 'delete', id, ifMatch: options.ifMatch, ifNoneMatch: options.ifNoneMatch }, options) as Promise<boolean | 'refused'>
    },

    get (id: bigint) {
      return run('read', () => reads.get(id))
    },

    list: samePages(plants.list),

    // A read while writes succeed; once they fail, a write that rolls back.
    check: readyCheck(async () => {
      const writesFailing = outage.writesFailing()
      await run(writesFailing ? 'write' : 'read', async () => {
        const client = await pool.connect()
        // A connection lost while checked out also emits 'error': the query fails with it.
        client.on('error', lost)
        try {
          const { rows } = await client.query<{ read_only: boolean }>({ name: 'plant-store-writable', text: WRITABLE })
          if (rows[0].read_only) throw readOnly()
          if (writesFailing) {
            await client.query('BEGIN')
            await client.query({ name: 'plant-store-headroom', text: HEADROOM })
            await client.query('ROLLBACK')
          }
          client.release()
        } catch (error) {
          // The session is dropped, so the next check opens one that sees the server as it is then.
          client.release(error as Error)
          throw error
        } finally {
          client.off('error', lost)
        }
      })
    }, outage),

    // Pending and in-flight batches commit first, so every write already called gets its outcome.
    close () {
      closing ??= writes.drain().then(async () => {
        ended = true
        await reads.drain()
        await webhooks.close()
        return pool.end()
      })
      return closing
    }
  }
}
