import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { combineObservers, openSqliteStore, type StoreObserver } from '../../../src/store/index.js'
import { CHECK_EVERY } from '../../../src/store/ready-check.js'

t.test('the store tells its observers of the queue and of each batch', async (t) => {
  const events: string[] = []
  let depth = (): number => NaN
  const watcher: StoreObserver = {
    queue: (read) => { depth = read },
    batch: (size) => {
      events.push(`batch ${size}`)
      return () => events.push(`end ${size}`)
    }
  }
  // One that watches nothing, and one that keeps no end: both are fine beside it.
  const store = openSqliteStore({ path: ':memory:', observer: combineObservers(watcher, undefined, { batch: () => undefined }, {}) })
  t.teardown(() => store.close())
  const writes = [store.create({ id: 1n, name: 'a' }), store.create({ id: 2n, name: 'b' }), store.delete(1n)]
  t.equal(depth(), 3, 'three writes wait for their batch')
  await Promise.all(writes)
  t.equal(depth(), 0)
  await store.create({ id: 3n, name: 'c' })
  // A batch ends once its commit has settled every caller.
  await new Promise((resolve) => setImmediate(resolve))
  t.same(events, ['batch 3', 'end 3', 'batch 1', 'end 1'])
})

t.test('an outage is told once when it starts and once when it ends', async (t) => {
  const seen: boolean[] = []
  const observer = combineObservers({ available: (up) => seen.push(up) }, {})
  const { default: Database } = await import('better-sqlite3')
  const { join } = await import('node:path')
  const path = join(t.testdir(), 'plants.db')
  const store = openSqliteStore({ path, timeout: 100, observer })
  t.teardown(() => store.close())
  const other = new Database(path)
  other.exec('BEGIN IMMEDIATE')
  await t.rejects(store.check())
  await sleep(CHECK_EVERY)
  await t.rejects(store.check())
  other.exec('ROLLBACK')
  other.close()
  await sleep(CHECK_EVERY)
  await store.check()
  await sleep(CHECK_EVERY)
  await store.check()
  t.same(seen, [false, true])
})
