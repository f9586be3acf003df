import Database from 'better-sqlite3'
import type { Test } from 'tap'
import t from 'tap'
import { openStore } from '../../../src/store/index.js'
import { StoreUnavailableError, type PlantStore } from '../../../src/store/types.js'
import { sqliteUrl } from '../../helpers/build.js'
import { PG_SKIP } from '../../helpers/requires.js'

const TIMEOUT = 600
// Timers fire a little late on a busy machine; a deadline missed by a whole batch's wait is not that.
const SLACK = 250

interface Held {
  store: PlantStore
  /** Makes the store stop answering writes (a lock held elsewhere, a stalled network). */
  hold: () => Promise<void>
  release: () => Promise<void>
}

async function open (t: Test, databaseUrl: string, databaseQueueLimit?: number): Promise<PlantStore> {
  const store = await openStore({ databaseUrl, sqliteSynchronous: 'normal', databasePoolSize: 1, databaseTimeout: TIMEOUT, databaseQueueLimit })
  t.teardown(() => store.close())
  return store
}

const kinds: Array<{ name: string, skip?: string, held: (t: Test, queueLimit?: number) => Promise<Held> }> = [
  {
    name: 'sqlite, its write lock held by another connection',
    async held (t, queueLimit) {
      const url = sqliteUrl(t)
      const store = await open(t, url, queueLimit)
      const other = new Database(url.slice('sqlite:'.length))
      t.teardown(() => other.close())
      return {
        store,
        hold: async () => { other.exec('BEGIN IMMEDIATE') },
        release: async () => { other.exec('ROLLBACK') }
      }
    }
  },
  {
    name: 'postgres, its connection stalled',
    skip: PG_SKIP,
    async held (t, queueLimit) {
      const { freshPostgresUrl } = await import('../../helpers/postgres.js')
      const { startProxy } = await import('../../helpers/proxy.js')
      const proxy = await startProxy(t, await freshPostgresUrl(t) as string)
      const store = await open(t, proxy.url, queueLimit)
      return { store, hold: async () => proxy.stall(), release: () => proxy.restore() }
    }
  }
]

async function timed<T> (work: Promise<T>): Promise<{ ms: number, error?: unknown, value?: T }> {
  const start = performance.now()
  try {
    const value = await work
    return { ms: performance.now() - start, value }
  } catch (error) {
    return { ms: performance.now() - start, error }
  }
}

for (const kind of kinds) {
  t.test(kind.name, { skip: kind.skip }, async (t) => {
    t.test('every write hears within the timeout, queued behind a stuck batch or not, and nothing it gave up on is stored', async (t) => {
      const { store, hold, release } = await kind.held(t)
      await hold()
      const first = [timed(store.create({ id: 1n, name: 'a' })), timed(store.delete(9n))]
      // Sent once the first batch is stuck: these wait in the queue behind it.
      await new Promise((resolve) => setTimeout(resolve, TIMEOUT / 3))
      const queued = [timed(store.create({ id: 2n, name: 'b' })), timed(store.create({ id: 3n, name: 'c' }))]
      for (const { ms, error } of await Promise.all([...first, ...queued])) {
        t.type(error, StoreUnavailableError)
        t.match((error as Error).message, /no answer within 600 ms/)
        // A timer counts from the event loop's clock, which may lag the call by a few ms.
        t.ok(ms >= TIMEOUT - 50 && ms < TIMEOUT + SLACK, `answered after ${Math.round(ms)} ms`)
      }
      await release()
      t.equal((await store.create({ id: 4n, name: 'd' })).outcome, 'created', 'writes again once released')
      t.equal(await store.get(2n), undefined, 'a queued write that timed out was never sent')
      t.equal(await store.get(3n), undefined)
    })

    t.test('the queue is bounded: beyond it, a write fails at once', async (t) => {
      const { store, hold, release } = await kind.held(t, 2)
      await hold()
      const stuck = store.create({ id: 1n, name: 'in flight' }).catch((error: unknown) => error)
      await new Promise((resolve) => setImmediate(resolve))
      await new Promise((resolve) => setImmediate(resolve))
      const waiting = [store.create({ id: 2n, name: 'q' }).catch((e: unknown) => e), store.create({ id: 3n, name: 'q' }).catch((e: unknown) => e)]
      const { ms, error } = await timed(store.create({ id: 4n, name: 'one too many' }))
      t.type(error, StoreUnavailableError)
      t.match((error as Error).message, /2 writes are waiting for the store, the most it queues/)
      t.ok(ms < 50, `refused in ${Math.round(ms)} ms`)
      await Promise.all([stuck, ...waiting])
      await release()
      t.equal((await store.create({ id: 4n, name: 'room again' })).outcome, 'created')
    })

    t.test('a write whose caller has gone is dropped before it is sent', async (t) => {
      const { store, hold, release } = await kind.held(t)
      let gone = false
      await store.create({ id: 1n, name: 'kept' })
      await hold()
      // Its batch is stuck (in flight), so the two below wait in the queue.
      const stuck = store.create({ id: 5n, name: 'in flight' }).catch(() => {})
      await new Promise((resolve) => setImmediate(resolve))
      await new Promise((resolve) => setImmediate(resolve))
      const left = store.create({ id: 2n, name: 'left' }, { abandoned: () => gone }).catch((error: unknown) => error)
      const deleted = store.delete(1n, { abandoned: () => gone }).catch((error: unknown) => error)
      gone = true
      await release()
      await stuck
      for (const error of await Promise.all([left, deleted])) {
        t.type(error, StoreUnavailableError)
        t.match((error as Error).message, /the client has gone/)
      }
      t.equal(await store.get(2n), undefined, 'the abandoned create was not stored')
      t.same(await store.get(1n), { name: 'kept' }, 'the abandoned delete did not run')
      await t.rejects(store.create({ id: 3n, name: 'x' }, { abandoned: () => true }), /the client has gone/)
      t.equal(await store.get(3n), undefined)
    })
  })
}
