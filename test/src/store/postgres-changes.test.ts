import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { plantEtag } from '../../../src/store/etag.js'
import { StoreUnavailableError, type PlantStore } from '../../../src/store/types.js'
import { connect, freshPostgresUrl, PG_SKIP } from '../../helpers/postgres.js'

const skip = PG_SKIP && `PostgreSQL: ${PG_SKIP}`

async function open (t: Test, url: string, timeout = 5000): Promise<PlantStore> {
  const { openPostgresStore } = await import('../../../src/store/postgres/index.js')
  // A fresh database's migrations are not what a short timeout is meant to bound: they run first.
  if (timeout < 5000) await (await openPostgresStore({ url, poolSize: 1, timeout: 5000 })).close()
  const store = await openPostgresStore({ url, poolSize: 2, timeout })
  t.teardown(() => store.close())
  return store
}

/** Settles without waiting: 'pending' when `promise` has not settled yet. */
async function peek (promise: Promise<unknown>): Promise<unknown> {
  return Promise.race([promise, nextTurn('pending')])
}

t.test('a change waits for a row another transaction holds, then is decided on the row as that one left it', { skip }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  const store = await open(t, url)
  const other = await connect(t, url)
  const fern = plantEtag({ name: 'Fern', tag: 'shade' })
  const cases = [
    // [what the other transaction commits, the change, its If-Match, the outcome]
    { other: "name = 'Palm'", change: { tag: 'sun' }, ifMatch: [fern], outcome: undefined },
    { other: "name = 'Palm'", change: { tag: 'sun' }, ifMatch: undefined, outcome: { outcome: 'updated', plant: { name: 'Palm', tag: 'sun' } } },
    { other: "name = 'Palm'", change: { name: 'Palm' }, ifMatch: undefined, outcome: { outcome: 'unchanged', plant: { name: 'Palm', tag: 'shade' } } },
    { other: "tag = 'shade'", change: { name: 'Palm' }, ifMatch: [fern], outcome: { outcome: 'updated', plant: { name: 'Palm', tag: 'shade' } } }
  ]
  for (const [i, { other: set, change, ifMatch, outcome }] of cases.entries()) {
    const id = BigInt(i + 1)
    await store.create({ id, name: 'Fern', tag: 'shade' })
    await other.query('BEGIN')
    await other.query(`UPDATE plants SET ${set} WHERE id = $1`, [String(id)])
    const update = store.update(id, change, { ifMatch })
    await sleep(200)
    t.equal(await peek(update), 'pending', `case ${i}: the change waits for the row`)
    await other.query('COMMIT')
    t.same(await update, outcome, `case ${i}`)
  }
  // A row deleted while the change waited for it: no plant.
  await store.create({ id: 10n, name: 'Fern', tag: 'shade' })
  await other.query('BEGIN')
  await other.query('DELETE FROM plants WHERE id = 10')
  const update = store.update(10n, { name: 'Palm' })
  const deletion = store.delete(11n)
  await sleep(200)
  await other.query('COMMIT')
  t.equal(await update, undefined)
  t.equal(await deletion, false)
})

t.test('a delete with If-Match is checked on the row as it is once the delete finds it', { skip }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  const store = await open(t, url)
  const other = await connect(t, url)
  for (const [id, set, deleted] of [[1n, "name = 'Palm'", false], [2n, "tag = 'shade'", true]] as const) {
    await store.create({ id, name: 'Fern', tag: 'shade' })
    await other.query('BEGIN')
    await other.query(`UPDATE plants SET ${set} WHERE id = $1`, [String(id)])
    const deletion = store.delete(id, { ifMatch: [plantEtag({ name: 'Fern', tag: 'shade' })] })
    await sleep(200)
    t.equal(await peek(deletion), 'pending')
    await other.query('COMMIT')
    t.equal(await deletion, deleted)
  }
})

t.test('If-None-Match on a change or delete is checked on the row as it is once the write finds it', { skip }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  const store = await open(t, url)
  const other = await connect(t, url)
  const palm = plantEtag({ name: 'Palm', tag: 'shade' })
  // The write's If-None-Match names the plant as the other transaction leaves it, not as it was when the write began.
  const cases = [
    { set: "name = 'Palm'", write: (id: bigint) => store.update(id, { tag: 'sun' }, { ifNoneMatch: [palm] }), outcome: { outcome: 'refused', plant: { name: 'Palm', tag: 'shade' } } },
    { set: "name = 'Palm'", write: (id: bigint) => store.delete(id, { ifNoneMatch: [palm] }), outcome: 'refused' },
    { set: "tag = 'sun'", write: (id: bigint) => store.update(id, { name: 'Palm' }, { ifNoneMatch: [palm] }), outcome: { outcome: 'updated', plant: { name: 'Palm', tag: 'sun' } } },
    { set: "tag = 'sun'", write: (id: bigint) => store.delete(id, { ifNoneMatch: [palm] }), outcome: true }
  ]
  for (const [i, { set, write, outcome }] of cases.entries()) {
    const id = BigInt(i + 1)
    await store.create({ id, name: 'Fern', tag: 'shade' })
    await other.query('BEGIN')
    await other.query(`UPDATE plants SET ${set} WHERE id = $1`, [String(id)])
    const result = write(id)
    await sleep(200)
    t.equal(await peek(result), 'pending', `case ${i}: the write waits for the row`)
    await other.query('COMMIT')
    t.same(await result, outcome, `case ${i}`)
  }
})

t.test('a change the server refuses fails alone: the others of its batch commit', { skip }, async (t) => {
  const store = await open(t, await freshPostgresUrl(t) as string)
  await Promise.all([1n, 2n, 3n].map((id) => store.create({ id, name: 'Fern' })))
  // U+0000 never passes the HTTP layer, but the store must survive it.
  const results = await Promise.allSettled([
    store.update(1n, { name: 'One' }),
    store.update(2n, { name: 'Bad\u0000name' }),
    store.update(3n, { tag: 'three' }),
    store.delete(4n)
  ])
  t.match(results, [
    { status: 'fulfilled', value: { outcome: 'updated', plant: { name: 'One' } } },
    { status: 'rejected', reason: { code: '22P05' } },
    { status: 'fulfilled', value: { outcome: 'updated', plant: { name: 'Fern', tag: 'three' } } },
    { status: 'fulfilled', value: false }
  ])
  t.notOk((results[1] as PromiseRejectedResult).reason instanceof StoreUnavailableError, 'a server error, not an outage')
  t.same(await store.get(2n), { name: 'Fern' })
})

t.test('changes that cannot commit in time are refused as unavailable, every one of their batch', { skip }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  const store = await open(t, url, 500)
  await store.create({ id: 1n, name: 'Fern' })
  const holder = await connect(t, url)
  await holder.query('BEGIN')
  await holder.query('LOCK TABLE plants IN ACCESS EXCLUSIVE MODE')
  const results = await Promise.allSettled([store.update(1n, { name: 'A' }), store.update(2n, { name: 'B' }), store.delete(1n, { ifMatch: [] })])
  await holder.query('ROLLBACK')
  for (const result of results) {
    t.equal(result.status, 'rejected')
    t.type((result as PromiseRejectedResult).reason, StoreUnavailableError)
  }
})

t.test('the change and delete statements find their rows by key', { skip }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  await (await open(t, url)).close()
  const client = await connect(t, url)
  await client.query("INSERT INTO plants SELECT i, 'plant ' || i, 'tag' || (i % 500) FROM generate_series(1, 200000) AS i")
  await client.query('ANALYZE plants')
  const { UPDATE, DELETE } = await import('../../../src/store/postgres/changes.js')
  const plan = async (sql: string, values: unknown[]) => {
    await client.query('BEGIN')
    try {
      const { rows } = await client.query(`EXPLAIN ${sql}`, values)
      return rows.map((row) => row['QUERY PLAN'] as string).join('\n')
    } finally {
      await client.query('ROLLBACK')
    }
  }
  const update = await plan(UPDATE, ['[{"id":"5","change":{"name":"x"},"match":null,"none":"abc"},{"id":"7","change":{"tag":null},"match":"abc","none":null}]', 'instance'])
  t.match(update, /Index Scan using plants_pkey on plants/)
  t.notMatch(update, /Seq Scan on plants/, update)
  const deletion = await plan(DELETE, [['5', '7'], 'instance', [null, 'abc'], ['abc', null]])
  t.match(deletion, /Index Scan using plants_pkey on plants/)
  t.notMatch(deletion, /Seq Scan on plants/, deletion)
})
