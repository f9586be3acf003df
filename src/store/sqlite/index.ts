// src/store/sqlite: the SQLite adapter of the store port, a file per concern.

import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'
import { setTimeout as sleep } from 'node:timers/promises'
import { groupCommit, stillWaiting } from '../group-commit.js'
import type { StoreObserver } from '../observer.js'
import { unsupportedNode } from '../../config/node-support.js'
import type { FastifyBaseLogger } from 'fastify'
import { SILENT, trackOutage, type Access } from '../outage.js'
import { StoreUnavailableError, type ChangeOptions, type CreateResult, type PlantChange, type PlantRecord, type PlantStore, type UpdateResult, type Write, type WriteOptions, type WriteResult } from '../types.js'
import { readyCheck } from '../ready-check.js'
import { fileIdentity } from './identity.js'
import { sqliteFeed, switchFeed } from './feed.js'
import { cursorKey, migrate } from './migrate.js'
import { plantStatements } from './plants.js'
import { readTurns } from './reads.js'
import { samePages } from '../same-pages.js'
import { sqliteWebhooks } from './webhooks.js'

export interface SqliteStoreOptions {
  /** A file path, or `:memory:`. The file's directory is created when missing. */
  path: string
  /** `normal` survives a crash of the process, `full` survives a power loss. */
  synchronous?: 'normal' | 'full'
  /** The longest a write waits, in ms, queue and another process's lock included. */
  timeout?: number
  /** Writes waiting for a batch at most; beyond it, a write fails at once. */
  queueLimit?: number
  /** Told once when the store turns unavailable (warn) and once when it answers again (info). */
  log?: Pick<FastifyBaseLogger, 'info' | 'warn'>
  /** Hears of the write queue, each batch and outages (metrics, traces). */
  observer?: StoreObserver
  /** Whether the change feed is on (EVENTS_RETENTION > 0): every change then writes its event. */
  feed?: boolean
}

// Errors that say the database cannot answer now, rather than that the request is wrong.
/** Bytes /ready writes and frees while writes fail: sixteen pages, room for hundreds of ordinary plants. */
const HEADROOM = 64 * 1024

const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY|CORRUPT|NOTADB)/

// better-sqlite3's busy handler sleeps on the main thread.
const MAX_RETRY_DELAY = 20

function busy (error: unknown): boolean {
  return /^SQLITE_BUSY/.test(String(((error as Error).cause as { code?: unknown } | undefined)?.code))
}

function unavailable (error: unknown): StoreUnavailableError | undefined {
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' && UNAVAILABLE.test(code) ? new StoreUnavailableError(code, { cause: error }) : undefined
}

export function openSqliteStore (options: SqliteStoreOptions): PlantStore {
  const { path, synchronous = 'normal', timeout = 5000, queueLimit = 10_000, log = SILENT, observer, feed = false } = options
  // better-sqlite3 would end the process with a segfault on its first statement.
  const refusal = unsupportedNode()
  if (refusal !== undefined) throw new Error(`the SQLite store cannot open: ${refusal}`)
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const db = new Database(path, { timeout: 0 })
  db.pragma('journal_mode = WAL')
  db.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`)
  migrate(db)
  const key = cursorKey(db)
  db.transaction(() => switchFeed(db, feed)).immediate()
  const verify = fileIdentity(path)

  // The webhook outbox's statements run inside the batch's transaction (see plants.ts's changes).
  const checked = <T>(work: () => T) => (): T => {
    verify()
    return work()
  }
  const webhooks = sqliteWebhooks(db, key, (work, wrote) => run('write', checked(work), wrote), (work) => run('read', checked(work)), feed)
  const events = feed ? sqliteFeed(db, (work) => run('read', checked(work)), (work) => run('write', checked(work)), webhooks.onCommits) : undefined
  const plants = plantStatements(db, webhooks.changed)
  // Ready means writable: a write committed now (see the probe's migration).
  const probe = db.prepare<[number]>('INSERT INTO plant_store_probe (id, at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET at = excluded.at')
  // Once writes have failed, ready means room for them again.
  const reserve = db.prepare<[number]>('INSERT INTO plant_store_headroom (room) VALUES (zeroblob(?))')
  const release = db.prepare('DELETE FROM plant_store_headroom')

  const outage = trackOutage(log, 'SQLite', observer)

  function run<T> (access: Access, work: () => T, wrote: (result: T) => boolean = () => true): T {
    let result: T
    try {
      result = work()
    } catch (error) {
      const cause = error instanceof StoreUnavailableError ? error : unavailable(error)
      if (cause !== undefined) outage.down(access, cause.message)
      throw cause ?? error
    }
    // A write that changed nothing committed no page: it says nothing of whether writes succeed.
    outage.up(access === 'write' && !wrote(result) ? 'read' : access)
    return result
  }

  // One transaction for a whole batch: one commit (one fsync with synchronous=full) instead of one per request.
  const commitBatch = db.transaction((batch: Write[]) =>
    batch.map((write): WriteResult | Error => {
      try {
        return plants.write(write)
      } catch (error) {
        // A full disk or an I/O error mid-batch ends the whole transaction: fail it all.
        /* c8 ignore next -- a statement meets the disk only when a batch outgrows the page cache; the tests' full disk fails the commit */
        if (unavailable(error) !== undefined) throw error
        return error as Error
      }
    }))

  const writes = groupCommit<Write, WriteResult>({
    maxBatch: 1000,
    // better-sqlite3 is synchronous: one batch at a time, the next gathers meanwhile.
    maxInFlight: 1,
    timeout,
    maxQueue: queueLimit,
    observer,
    async commit (batch) {
      for (let delay = 1; ; delay = Math.min(2 * delay, MAX_RETRY_DELAY)) {
        // Writes whose callers timed out or left while the lock was held are not committed.
        const live = batch.filter(stillWaiting)
        if (live.length === 0) return
        let results: Array<WriteResult | Error>
        try {
          results = run('write', () => {
            // Before the commit as well as after it.
            verify()
            const committed = commitBatch.immediate(live.map((waiter) => waiter.item))
            // A file deleted while the batch committed took the batch with it: not a 200.
            verify()
            return committed
          })
        } catch (error) {
          if (busy(error)) {
            await sleep(delay)
            continue
          }
          for (const waiter of live) waiter.reject(error)
          return
        }
        // Only now, after the commit, does any request hear its outcome.
        results.forEach((result, i) => result instanceof Error ? live[i].reject(result) : live[i].resolve(result))
        return
      }
    }
  })

  const reads = readTurns(db, (work) => run('read', work))

  return {
    webhooks: webhooks.store,
    events,
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
      return reads.add(() => plants.get(id))
    },

    list: samePages((query) => reads.add(() => plants.list(query))),

    check: readyCheck(async () => {
      run('write', () => {
        verify()
        if (outage.writesFailing()) {
          reserve.run(HEADROOM)
          release.run()
        } else {
          probe.run(Date.now())
        }
      })
    }, outage),

    async close () {
      reads.flush()
      await writes.drain()
      if (db.open) db.close()
    }
  }
}
