import { existsSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import t from 'tap'
import { openSqliteStore } from '../../../src/store/sqlite.js'
import { StoreUnavailableError } from '../../../src/store/types.js'

t.test('creates the directory, uses WAL and the requested synchronous level', async (t) => {
  const path = join(t.testdir(), 'nested', 'deeper', 'plants.db')
  const store = openSqliteStore({ path, synchronous: 'full' })
  t.teardown(() => store.close())
  t.ok(existsSync(path))
  const db = new Database(path)
  t.equal(db.pragma('journal_mode', { simple: true }), 'wal')
  t.equal(db.pragma('user_version', { simple: true }), 1, 'migrated to the current version')
  db.close()
})

t.test('outcomes: created, replayed, conflict; the stored plant stays', async (t) => {
  const store = openSqliteStore({ path: ':memory:' })
  t.teardown(() => store.close())
  t.same(await store.create({ id: 1n, name: 'a', tag: 't' }), { outcome: 'created', plant: { name: 'a', tag: 't' } })
  t.same(await store.create({ id: 1n, name: 'a', tag: 't' }), { outcome: 'replayed', plant: { name: 'a', tag: 't' } })
  t.same(await store.create({ id: 1n, name: 'a' }), { outcome: 'conflict', plant: { name: 'a', tag: 't' } })
  t.same(await store.get(1n), { name: 'a', tag: 't' })
  t.equal(await store.get(2n), undefined)
})

t.test('migrations run once; a newer schema is refused', async (t) => {
  const path = join(t.testdir(), 'plants.db')
  await openSqliteStore({ path }).close()
  const again = openSqliteStore({ path })
  await again.create({ id: 7n, name: 'kept' })
  await again.close()
  const reopened = openSqliteStore({ path })
  t.same(await reopened.get(7n), { name: 'kept' })
  await reopened.close()
  const db = new Database(path)
  db.pragma('user_version = 99')
  db.close()
  t.throws(() => openSqliteStore({ path }), /schema is version 99, newer than this build's 1/)
})

t.test('a write lock held elsewhere makes the store unavailable, then it recovers', async (t) => {
  const path = join(t.testdir(), 'plants.db')
  const store = openSqliteStore({ path, busyTimeout: 50 })
  t.teardown(() => store.close())
  const other = new Database(path)
  other.exec('BEGIN IMMEDIATE')
  await t.rejects(store.create({ id: 1n, name: 'x' }), StoreUnavailableError)
  await t.rejects(store.check(), /store unavailable: SQLITE_BUSY/)
  other.exec('ROLLBACK')
  other.close()
  await store.check()
  t.equal((await store.create({ id: 1n, name: 'x' })).outcome, 'created')
})

t.test('other failures are not disguised as unavailability', async (t) => {
  const store = openSqliteStore({ path: ':memory:' })
  await store.close()
  await store.close()
  const error = await store.get(1n).catch((error: unknown) => error)
  t.type(error, TypeError)
  t.notOk(error instanceof StoreUnavailableError)
})
