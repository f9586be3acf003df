import t from 'tap'
import type { PlantStore } from '../../../src/store/types.js'
import { forEachStore, openTestStore, rawSql, type Sql } from '../../helpers/stores.js'

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'

async function subscribe (store: PlantStore, url = 'https://receiver.example/hook') {
  return await store.webhooks.createEndpoint({ url, secret: SECRET })
}

/** Every event, oldest first: the plant id as text, and the exact body. */
async function events (sql: Sql): Promise<Array<[string, string]>> {
  return (await sql('SELECT plant_id, body FROM webhook_events ORDER BY id')).map((row) => [String(row.plant_id), row.body as string])
}

/** How many deliveries each endpoint has. */
async function deliveries (sql: Sql): Promise<Record<string, number>> {
  const rows = await sql('SELECT endpoint_id, count(*) AS n FROM webhook_deliveries GROUP BY endpoint_id')
  return Object.fromEntries(rows.map((row) => [row.endpoint_id as string, Number(row.n)]))
}

forEachStore(t, (t, _build, databaseUrl) => {
  async function open (t: Parameters<typeof databaseUrl>[0]) {
    const url = await databaseUrl(t)
    return { store: await openTestStore(t, url), sql: await rawSql(t, url) }
  }

  t.test('without an enabled endpoint a create writes no event', async (t) => {
    const { store, sql } = await open(t)
    await store.create({ id: 1n, name: 'Monstera' })
    const endpoint = await subscribe(store)
    await store.webhooks.updateEndpoint(endpoint.id, { enabled: false })
    await store.create({ id: 2n, name: 'Fern' })
    t.same(await events(sql), [])
    t.same(await deliveries(sql), {})
  })

  t.test('a new plant: one event with the exact NewPlant body, one delivery per enabled endpoint', async (t) => {
    const { store, sql } = await open(t)
    const a = await subscribe(store, 'https://a.example/')
    const b = await subscribe(store, 'https://b.example/')
    const off = await subscribe(store, 'https://off.example/')
    await store.webhooks.updateEndpoint(off.id, { enabled: false })
    await store.create({ id: 9007199254740993n, name: 'Monstera "deliciosa"' })
    await store.create({ id: -9223372036854775808n, name: 'Fern', tag: '' })
    await store.create({ id: 7n, name: 'Ivy', tag: 'climber' })
    t.same(await events(sql), [
      ['9007199254740993', '{"id":9007199254740993,"name":"Monstera \\"deliciosa\\""}'],
      ['-9223372036854775808', '{"id":-9223372036854775808,"name":"Fern","tag":""}'],
      ['7', '{"id":7,"name":"Ivy","tag":"climber"}']
    ], 'ids exact, tag absent when none, kept when empty')
    t.same(await deliveries(sql), { [a.id]: 3, [b.id]: 3 }, 'none for the disabled endpoint')
    const listed = await store.webhooks.listDeliveries(a.id, { limit: 10 })
    t.same(listed?.map((d) => d.plantId).sort(), [-9223372036854775808n, 7n, 9007199254740993n])
    t.ok(listed?.every((d) => /^msg_[0-9a-f]{28}$/.test(d.id)), 'webhook-ids: msg_ and 28 hex digits')
    t.equal(new Set((await sql('SELECT id FROM webhook_deliveries')).map((row) => row.id)).size, 6, 'each delivery has a webhook-id of its own')
    t.ok(listed?.every((d) => parseInt(d.id.slice(4, 16), 16) === d.createdAt.getTime()), 'each starts with its creation time, so new keys go at the end of the index')
  })

  t.test('a replay or a conflict writes nothing; of one id in one batch, only the create that inserts it', async (t) => {
    const { store, sql } = await open(t)
    await subscribe(store)
    const results = await Promise.all([
      store.create({ id: 1n, name: 'A' }),
      store.create({ id: 1n, name: 'A' }),
      store.create({ id: 1n, name: 'B' }),
      store.create({ id: 2n, name: 'C' })
    ])
    t.same(results.map((r) => r.outcome), ['created', 'replayed', 'conflict', 'created'])
    t.same(await store.create({ id: 2n, name: 'C' }), { outcome: 'replayed', plant: { name: 'C' } })
    t.same(await store.create({ id: 2n, name: 'D' }), { outcome: 'conflict', plant: { name: 'C' } })
    t.same(await events(sql), [['1', '{"id":1,"name":"A"}'], ['2', '{"id":2,"name":"C"}']].sort(), 'one event per plant added')
  })

  t.test('a plant deleted and created again is a new event', async (t) => {
    const { store, sql } = await open(t)
    const endpoint = await subscribe(store)
    await store.create({ id: 5n, name: 'First' })
    t.equal(await store.delete(5n), true)
    await store.create({ id: 5n, name: 'Second' })
    t.same(await events(sql), [['5', '{"id":5,"name":"First"}'], ['5', '{"id":5,"name":"Second"}']])
    t.same(await deliveries(sql), { [endpoint.id]: 2 })
  })

  t.test('an endpoint gets the plants added while it is enabled, from its creation on', async (t) => {
    const { store, sql } = await open(t)
    await store.create({ id: 1n, name: 'before' })
    const endpoint = await subscribe(store)
    await store.create({ id: 2n, name: 'while enabled' })
    await store.webhooks.updateEndpoint(endpoint.id, { enabled: false })
    await store.create({ id: 3n, name: 'while disabled' })
    await store.webhooks.updateEndpoint(endpoint.id, { enabled: true })
    await store.create({ id: 4n, name: 'enabled again' })
    const listed = await store.webhooks.listDeliveries(endpoint.id, { limit: 10 })
    t.same(listed?.map((d) => d.plantId).sort(), [2n, 4n])
    t.same((await events(sql)).map(([id]) => id), ['2', '4'])
  })

  t.test('listeners hear of a commit that added deliveries, once it can be claimed; not of one that added none', async (t) => {
    const { store } = await open(t)
    let calls = 0
    const claimed: string[] = []
    const stop = store.webhooks.onDeliveries(() => {
      calls++
      store.webhooks.claim('listener', 10, 60000).then((got) => claimed.push(...got.map((d) => d.body)), t.error)
    })
    await store.create({ id: 1n, name: 'no endpoint yet' })
    await new Promise((resolve) => setTimeout(resolve, 50))
    t.equal(calls, 0, 'no endpoint: no call')

    await subscribe(store)
    await Promise.all([store.create({ id: 2n, name: 'B' }), store.create({ id: 3n, name: 'C' })])
    await store.create({ id: 2n, name: 'B' })
    for (let i = 0; i < 100 && claimed.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 10))
    t.same(claimed.sort(), ['{"id":2,"name":"B"}', '{"id":3,"name":"C"}'], 'the deliveries are committed when the listener runs')
    t.equal(calls, 1, 'one call for the batch, none for the replay')

    stop()
    await store.create({ id: 4n, name: 'D' })
    await new Promise((resolve) => setTimeout(resolve, 50))
    t.equal(calls, 1, 'a stopped listener hears nothing')
  })
})
