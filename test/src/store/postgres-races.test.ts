import t, { type Test } from 'tap'
import type { PlantStore } from '../../../src/store/types.js'
import { connect, freshPostgresUrl, PG_SKIP } from '../../helpers/postgres.js'
import { startProxy } from '../../helpers/proxy.js'

const skip = PG_SKIP && `PostgreSQL: ${PG_SKIP}`

async function open (t: Test, url: string): Promise<PlantStore> {
  const { openPostgresStore } = await import('../../../src/store/postgres/index.js')
  const store = await openPostgresStore({ url, poolSize: 4, timeout: 5000 })
  t.teardown(() => store.close())
  return store
}

t.test('a create that finds its id taken, and then free (a delete committed between its INSERT and its read), creates the plant', { skip }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  const proxy = await startProxy(t, url)
  const store = await open(t, proxy.url)
  const other = await connect(t, url)
  t.same(await store.create({ id: 1n, name: 'Fern' }), { outcome: 'created', plant: { name: 'Fern' } })
  t.same(await store.create({ id: 2n, name: 'Ivy' }), { outcome: 'created', plant: { name: 'Ivy' } })

  for (const [id, name] of [[1n, 'Fern'], [2n, 'Moss']] as const) {
    // The INSERT finds the id taken; its read of the plant that holds it is held until another session has deleted it.
    const read = proxy.holdNext('plant-store-select-many')
    const create = store.create({ id, name })
    await read.reached
    t.equal((await other.query('DELETE FROM plants WHERE id = $1', [String(id)])).rowCount, 1, 'deleted meanwhile')
    read.release()
    t.same(await create, { outcome: 'created', plant: { name } }, `${name}: created, the id being free again`)
    t.same(await store.get(id), { name })
  }
})

// One instance orders the writes of one id in its queue; the race needs a second one on the same database.
t.test('creates and deletes of the same ids, at once, on two instances sharing a database: every create is created, replayed or in conflict', { skip }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  const stores = await Promise.all([open(t, url), open(t, url)])
  const ids = [1n, 2n, 3n, 4n]
  const outcomes = { created: 0, replayed: 0, conflict: 0, deleted: 0, failed: 0 }
  for (let round = 0; round < 60; round++) {
    const work: Array<Promise<void>> = []
    for (let i = 0; i < 2; i++) {
      const store = stores[i]
      for (const id of ids) {
        // Two names, so that conflicts come too.
        work.push(store.create({ id, name: `plant ${(round + i) % 2}` }).then(({ outcome }) => { outcomes[outcome]++ }))
        work.push(store.delete(id).then((deleted) => { if (deleted) outcomes.deleted++ }))
      }
    }
    for (const result of await Promise.allSettled(work)) {
      if (result.status === 'rejected') {
        outcomes.failed++
        t.fail(String(result.reason))
      }
    }
  }
  t.equal(outcomes.failed, 0, `no create or delete failed: ${JSON.stringify(outcomes)}`)
  t.ok(outcomes.created > 0 && outcomes.deleted > 0, 'both creates and deletes won some')
})
