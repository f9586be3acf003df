import t from 'tap'
import { StoreUnavailableError } from '../../../src/store/types.js'
import { connect, freshPostgresUrl, PG_SKIP } from '../../helpers/postgres.js'

t.test('a delete that cannot commit in time rejects every delete of its batch', { skip: PG_SKIP && `PostgreSQL: ${PG_SKIP}` }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  const { openPostgresStore } = await import('../../../src/store/postgres/index.js')
  // Migrated first: the store under test spends none of its short timeout migrating.
  await (await openPostgresStore({ url, poolSize: 1, timeout: 5000 })).close()
  const store = await openPostgresStore({ url, poolSize: 2, timeout: 500 })
  t.teardown(() => store.close())
  t.same(await store.create({ id: 1n, name: 'Fern' }), { outcome: 'created', plant: { name: 'Fern' } })

  // Another session holds the table: the batch's DELETE waits past the statement timeout.
  const holder = await connect(t, url)
  await holder.query('BEGIN')
  await holder.query('LOCK TABLE plants IN ACCESS EXCLUSIVE MODE')
  const results = await Promise.allSettled([store.delete(1n), store.delete(1n)])
  await holder.query('ROLLBACK')
  for (const result of results) {
    t.equal(result.status, 'rejected')
    t.type((result as PromiseRejectedResult).reason, StoreUnavailableError)
  }
  // A timed-out statement may still have committed on the server (the answer was a 503,
  // never a false 204): what a later delete finds agrees with what a read finds.
  const still = await store.get(1n)
  t.equal(await store.delete(1n), still !== undefined, 'once the table is free, the store agrees with itself')
})
