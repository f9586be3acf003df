import { join } from 'node:path'
import Database from 'better-sqlite3'
import t from 'tap'
import { openSqliteStore } from '../../../src/store/sqlite/index.js'
import { readTurns } from '../../../src/store/sqlite/reads.js'

t.test('the reads of one turn run in one transaction after it; a read alone runs on its own', async (t) => {
  const db = new Database(join(t.testdir(), 'reads.db'))
  t.teardown(() => db.close())
  db.pragma('journal_mode = WAL')
  let wrapped = 0
  const reads = readTurns(db, (work) => { wrapped++; return work() })
  const inTransaction = () => db.inTransaction

  const turn = [reads.add(inTransaction), reads.add(inTransaction), reads.add(inTransaction)]
  t.equal(wrapped, 0, 'nothing runs during the turn')
  t.same(await Promise.all(turn), [true, true, true])
  t.equal(wrapped, 4, 'each read, and the transaction, through `run`')
  t.equal(db.inTransaction, false, 'ended after the turn')

  t.equal(await reads.add(inTransaction), false, 'alone: no transaction')
})

t.test('a read that fails in its turn fails alone', async (t) => {
  const db = new Database(join(t.testdir(), 'reads.db'))
  t.teardown(() => db.close())
  const reads = readTurns(db, (work) => work())
  const [first, failed, last] = await Promise.allSettled([
    reads.add(() => 1),
    reads.add(() => { throw new Error('this read only') }),
    reads.add(() => db.prepare('SELECT 3 AS n').get())
  ])
  t.same(first, { status: 'fulfilled', value: 1 })
  t.match(failed, { status: 'rejected', reason: { message: 'this read only' } })
  t.same(last, { status: 'fulfilled', value: { n: 3 } })
})

t.test('the store: gets and pages of one turn each get their own answer; close runs the reads still waiting', async (t) => {
  const store = openSqliteStore({ path: join(t.testdir(), 'plants.db') })
  for (const id of [1n, 2n, 3n]) await store.create({ id, name: `plant ${id}`, tag: id === 2n ? 'fern' : undefined })

  const [one, missing, out, page, ferns] = await Promise.allSettled([
    store.get(1n),
    store.get(7n),
    // Beyond int64: better-sqlite3 refuses the value, for this read only.
    store.get(2n ** 70n),
    store.list({ limit: 2 }),
    store.list({ limit: 10, tag: 'fern' })
  ])
  t.same(one, { status: 'fulfilled', value: { name: 'plant 1' } })
  t.same(missing, { status: 'fulfilled', value: undefined })
  t.equal(out.status, 'rejected')
  t.same(page, { status: 'fulfilled', value: [{ id: 1n, name: 'plant 1' }, { id: 2n, name: 'plant 2', tag: 'fern' }] })
  t.same(ferns, { status: 'fulfilled', value: [{ id: 2n, name: 'plant 2', tag: 'fern' }] })

  const last = store.get(3n)
  await store.close()
  t.same(await last, { name: 'plant 3' }, 'read before the database closed')
})
