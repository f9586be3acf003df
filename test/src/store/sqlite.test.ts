import { setTimeout as sleep } from 'node:timers/promises'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import t from 'tap'
import { buildApp } from '../../../src/app.js'
import { loadConfig } from '../../../src/config/index.js'
import { openSqliteStore } from '../../../src/store/sqlite/index.js'
import { StoreUnavailableError } from '../../../src/store/types.js'
import { CHECK_EVERY } from '../../../src/store/ready-check.js'

t.test('creates the directory, uses WAL and the requested synchronous level', async (t) => {
  const path = join(t.testdir(), 'nested', 'deeper', 'plants.db')
  const store = openSqliteStore({ path, synchronous: 'full' })
  t.teardown(() => store.close())
  t.ok(existsSync(path))
  const db = new Database(path)
  t.equal(db.pragma('journal_mode', { simple: true }), 'wal')
  t.equal(db.pragma('user_version', { simple: true }), 10, 'migrated to the current version')
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
  const first = openSqliteStore({ path })
  await first.close()
  const again = openSqliteStore({ path })
  await again.create({ id: 7n, name: 'kept' })
  await again.close()
  const reopened = openSqliteStore({ path })
  t.same(await reopened.get(7n), { name: 'kept' })
  t.equal(first.cursorKey.length, 32, 'a cursor key of 32 bytes')
  t.ok(reopened.cursorKey.equals(first.cursorKey) && again.cursorKey.equals(first.cursorKey), 'made once, kept in the file')
  t.strictSame(reopened.webhooks.cursorKey, reopened.cursorKey)
  const other = openSqliteStore({ path: ':memory:' })
  t.notOk(other.cursorKey.equals(first.cursorKey), 'another database has another')
  await other.close()
  await reopened.close()
  const db = new Database(path)
  db.pragma('user_version = 99')
  db.close()
  t.throws(() => openSqliteStore({ path }), /schema is version 99, newer than this build's 10/)
})

t.test('a write lock held elsewhere makes the store unavailable, then it recovers', async (t) => {
  const path = join(t.testdir(), 'plants.db')
  const store = openSqliteStore({ path, timeout: 200 })
  t.teardown(() => store.close())
  const other = new Database(path)
  other.exec('BEGIN IMMEDIATE')
  // The whole batch fails together.
  const results = await Promise.allSettled([store.create({ id: 1n, name: 'x' }), store.create({ id: 2n, name: 'y' })])
  t.same(results.map((r) => r.status), ['rejected', 'rejected'])
  for (const r of results) t.type((r as PromiseRejectedResult).reason, StoreUnavailableError)
  await t.rejects(store.check(), /store unavailable: SQLITE_BUSY/)
  other.exec('ROLLBACK')
  other.close()
  // The check's answer stands for a second: then the next one finds the store writable again.
  await t.rejects(store.check(), /store unavailable: SQLITE_BUSY/)
  await sleep(CHECK_EVERY)
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

t.test('one batch: new ids, replays, conflicts, duplicates of one id, and a row that fails alone', async (t) => {
  const path = join(t.testdir(), 'plants.db')
  const store = openSqliteStore({ path })
  t.teardown(() => store.close())
  await store.create({ id: 1n, name: 'old', tag: 't' })

  // All created in one turn of the event loop: one batch, one transaction.
  const results = await Promise.allSettled([
    store.create({ id: 1n, name: 'old', tag: 't' }),
    store.create({ id: 1n, name: 'old' }),
    store.create({ id: 2n, name: 'new' }),
    store.create({ id: 3n, name: Buffer.from('not text') as unknown as string }),
    store.create({ id: 4n, name: 'first' }),
    store.create({ id: 4n, name: 'first' }),
    store.create({ id: 4n, name: 'second' }),
    store.create({ id: -9223372036854775808n, name: 'min' })
  ])
  const outcome = (r: PromiseSettledResult<{ outcome: string }>) => r.status === 'fulfilled' ? r.value.outcome : 'rejected'
  t.same(results.map(outcome), ['replayed', 'conflict', 'created', 'rejected', 'created', 'replayed', 'conflict', 'created'])
  t.match((results[3] as PromiseRejectedResult).reason, { code: 'SQLITE_CONSTRAINT_DATATYPE' })
  t.notOk((results[3] as PromiseRejectedResult).reason instanceof StoreUnavailableError)

  const other = new Database(path, { readonly: true })
  t.teardown(() => other.close())
  const ids = other.prepare('SELECT id, name, tag FROM plants ORDER BY id').safeIntegers(true).all()
  t.same(ids, [
    { id: -9223372036854775808n, name: 'min', tag: null },
    { id: 1n, name: 'old', tag: 't' },
    { id: 2n, name: 'new', tag: null },
    { id: 4n, name: 'first', tag: null }
  ], 'the failed row alone is missing')
})

t.test('no create resolves before its row is committed', async (t) => {
  const path = join(t.testdir(), 'plants.db')
  const store = openSqliteStore({ path })
  t.teardown(() => store.close())
  const other = new Database(path, { readonly: true })
  t.teardown(() => other.close())
  const seen = other.prepare<[bigint], { name: string }>('SELECT name FROM plants WHERE id = ?')
  await Promise.all(Array.from({ length: 300 }, (_, i) => store.create({ id: BigInt(i), name: `p${i}` }).then(() => {
    t.equal(seen.get(BigInt(i))?.name, `p${i}`)
  })))
})

t.test('close() waits for the pending batch', async (t) => {
  const path = join(t.testdir(), 'plants.db')
  const store = openSqliteStore({ path })
  const pending = Promise.all([store.create({ id: 1n, name: 'a' }), store.create({ id: 2n, name: 'b' })])
  await store.close()
  t.same((await pending).map((r) => r.outcome), ['created', 'created'])
  const reopened = openSqliteStore({ path })
  t.same(await reopened.get(2n), { name: 'b' })
  await reopened.close()
})

t.test('in the app, an outage is logged once when it starts and once when it ends', async (t) => {
  const path = join(t.testdir(), 'plants.db')
  const lines: string[] = []
  const config = loadConfig({ API_TOKENS: 'k', LOG_LEVEL: 'info', DATABASE_URL: `sqlite:${path}`, DATABASE_TIMEOUT: '100' })
  const app = await buildApp(config, { logStream: { write: (line) => { lines.push(line) } } })
  t.teardown(() => app.close())
  const post = (id: number) => app.inject({ method: 'POST', url: '/plants', headers: { authorization: 'Bearer k', 'content-type': 'application/json' }, payload: { id, name: 'p' } })

  const other = new Database(path)
  other.exec('BEGIN IMMEDIATE')
  for (const id of [1, 2, 3]) t.equal((await post(id)).statusCode, 503)
  t.equal((await app.inject('/ready')).statusCode, 503)
  other.exec('ROLLBACK')
  other.close()
  t.equal((await post(4)).statusCode, 200)
  t.equal((await post(5)).statusCode, 200)

  const messages = lines.map((line) => JSON.parse(line)).filter((line) => line.level >= 40 || /SQLite/.test(line.msg))
  t.same(messages.map((line) => [line.level, line.msg]), [
    [40, 'SQLite is unavailable: requests get 503 until it answers again'],
    [30, 'SQLite answers again']
  ], 'no error line per request, one warn and one info for the outage')
})
