import t from 'tap'
import { EndpointLimitError } from '../../../src/store/webhook-types.js'
import { forEachStore, openTestStore } from '../../helpers/stores.js'

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'

forEachStore(t, (t, _build, databaseUrl) => {
  t.test('endpoints page by key, oldest first, those of one millisecond in the order they were made', async (t) => {
    const store = await openTestStore(t, await databaseUrl(t))
    const made = []
    for (let i = 0; i < 7; i++) made.push(await store.webhooks.createEndpoint({ url: `https://e${i}.example/`, secret: SECRET }))
    t.same(await store.webhooks.listEndpoints(), made, 'every one without a page')
    t.same(await store.webhooks.listEndpoints({ limit: 3 }), made.slice(0, 3))
    t.same(await store.webhooks.listEndpoints({ limit: 3, after: made[2] }), made.slice(3, 6))
    t.same(await store.webhooks.listEndpoints({ limit: 3, after: made[5] }), made.slice(6))
    // The position stays good once the endpoint it names is gone.
    await store.webhooks.deleteEndpoint(made[3].id)
    t.same(await store.webhooks.listEndpoints({ limit: 2, after: made[3] }), made.slice(4, 6))
  })

  t.test('the endpoint limit holds with two instances on one database registering at once', async (t) => {
    const url = await databaseUrl(t)
    const stores = [await openTestStore(t, url), await openTestStore(t, url)]
    const results = await Promise.allSettled(Array.from({ length: 16 }, (_, i) =>
      stores[i % 2].webhooks.createEndpoint({ url: `https://e${i}.example/`, secret: SECRET }, 5)))
    const created = results.filter((result) => result.status === 'fulfilled')
    const refused = results.filter((result) => result.status === 'rejected').map((result) => result.reason)
    // SQLite: a second process may find the file busy (a 503 to a client); never a sixth endpoint.
    t.ok(created.length <= 5, `${created.length} created`)
    t.equal((await stores[0].webhooks.listEndpoints()).length, created.length, 'as many as were created')
    t.ok(refused.every((reason) => reason instanceof EndpointLimitError || reason.name === 'StoreUnavailableError'), 'the others refused')
    const more = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => stores[0].webhooks.createEndpoint({ url: `https://f${i}.example/`, secret: SECRET }, 5)))
    t.equal((await stores[1].webhooks.listEndpoints()).length, 5, 'then filled up to the limit, never past it')
    t.ok(more.some((result) => result.status === 'rejected' && result.reason instanceof EndpointLimitError))
    await t.rejects(stores[1].webhooks.createEndpoint({ url: 'https://g.example/', secret: SECRET }, 5), { name: 'EndpointLimitError', limit: 5, message: 'the limit of 5 webhook endpoints is reached' })
    t.ok(await stores[1].webhooks.createEndpoint({ url: 'https://h.example/', secret: SECRET }), 'no limit given: none applies')
  })
})
