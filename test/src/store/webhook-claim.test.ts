import t from 'tap'
import { openStore } from '../../../src/store/index.js'
import { expandAll, forEachStore } from '../../helpers/stores.js'

forEachStore(t, (t, _build, databaseUrl) => {
  t.test('a claim leaves out the endpoints it is asked to', async (t) => {
    const store = await openStore({ databaseUrl: await databaseUrl(t), sqliteSynchronous: 'normal', databasePoolSize: 2, databaseTimeout: 2000 })
    t.teardown(() => store.close())
    const [a, b] = [
      await store.webhooks.createEndpoint({ url: 'https://a.example/', secret: 'whsec_AAAA' }),
      await store.webhooks.createEndpoint({ url: 'https://b.example/', secret: 'whsec_BBBB' })
    ]
    for (let i = 1; i <= 3; i++) await store.create({ id: BigInt(i), name: `p${i}` })
    await expandAll(store)
    const onlyB = await store.webhooks.claim('one', 10, 60_000, { exclude: [a.id] })
    t.same(onlyB.map((d) => d.endpointId), [b.id, b.id, b.id])
    t.same(await store.webhooks.claim('one', 10, 60_000, { exclude: [a.id, b.id] }), [], 'both left out')
    const rest = await store.webhooks.claim('one', 10, 60_000, { exclude: [] })
    t.same(rest.map((d) => d.endpointId), [a.id, a.id, a.id], 'an empty list leaves out none')
  })
})
