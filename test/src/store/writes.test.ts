import t from 'tap'
import { openStore } from '../../../src/store/index.js'
import type { PlantStore } from '../../../src/store/types.js'
import { forEachStore } from '../../helpers/stores.js'

forEachStore(t, (t, _build, databaseUrl) => {
  async function open (t: Parameters<typeof databaseUrl>[0]): Promise<PlantStore> {
    const store = await openStore({ databaseUrl: await databaseUrl(t), sqliteSynchronous: 'normal', databasePoolSize: 4, databaseTimeout: 5000 })
    t.teardown(() => store.close())
    return store
  }

  t.test('writes of one id in one batch keep their arrival order', async (t) => {
    const store = await open(t)
    // Called in one turn of the event loop: one batch, committed in this order.
    const results = await Promise.all([
      store.create({ id: 1n, name: 'A' }),
      store.delete(1n),
      store.delete(1n),
      store.create({ id: 1n, name: 'B', tag: 'b' }),
      store.create({ id: 1n, name: 'A' }),
      store.delete(2n),
      store.create({ id: 2n, name: 'C' })
    ])
    t.same(results, [
      { outcome: 'created', plant: { name: 'A' } },
      true,
      false,
      { outcome: 'created', plant: { name: 'B', tag: 'b' } },
      { outcome: 'conflict', plant: { name: 'B', tag: 'b' } },
      false,
      { outcome: 'created', plant: { name: 'C' } }
    ])
    t.same(await store.get(1n), { name: 'B', tag: 'b' })
    t.same(await store.list({ limit: 10 }), [{ id: 1n, name: 'B', tag: 'b' }, { id: 2n, name: 'C' }])
  })

  t.test('3,000 writes in one turn: three batches, every one committed with its own outcome', async (t) => {
    const store = await open(t)
    const results = await Promise.all(Array.from({ length: 3000 }, (_, i) => store.create({ id: BigInt(i), name: `p${i}` })))
    t.ok(results.every((result) => result.outcome === 'created'))
    t.equal((await store.list({ limit: 100, after: 2899n })).length, 100)
  })

  t.test('list pages by key, with and without a tag', async (t) => {
    const store = await open(t)
    await Promise.all([-3n, -1n, 0n, 2n, 5n].map((id) => store.create({ id, name: `p${id}`, tag: id < 1n ? 'low' : undefined })))
    t.same((await store.list({ limit: 2 })).map((p) => p.id), [-3n, -1n])
    t.same((await store.list({ limit: 2, after: -1n })).map((p) => p.id), [0n, 2n])
    t.same((await store.list({ limit: 9, tag: 'low' })).map((p) => p.id), [-3n, -1n, 0n])
    t.same((await store.list({ limit: 9, tag: 'low', after: -3n })).map((p) => p.id), [-1n, 0n])
    t.same(await store.list({ limit: 9, after: 5n }), [])
  })
})
