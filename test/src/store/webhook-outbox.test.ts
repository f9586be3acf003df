import t from 'tap'
import { plantEtag } from '../../../src/store/etag.js'
import type { PlantStore } from '../../../src/store/types.js'
import { STOPPED } from '../../../src/store/webhook-common.js'
import type { WebhookEventType } from '../../../src/store/webhook-types.js'
import { expandAll, forEachStore, openTestStore, rawSql, type Sql } from '../../helpers/stores.js'

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
const ALL: WebhookEventType[] = ['plant.created', 'plant.updated', 'plant.deleted']

async function subscribe (store: PlantStore, url = 'https://receiver.example/hook', events?: WebhookEventType[]) {
  return await store.webhooks.createEndpoint({ url, secret: SECRET, events })
}

/** Every event, oldest first: its type, the plant id as text, and the exact data. */
async function events (sql: Sql): Promise<Array<[string, string, string]>> {
  return (await sql('SELECT type, plant_id, body FROM webhook_events ORDER BY id')).map((row) => [row.type as string, String(row.plant_id), row.body as string])
}

/** How many deliveries each endpoint has. */
async function deliveries (sql: Sql): Promise<Record<string, number>> {
  const rows = await sql('SELECT endpoint_id, count(*) AS n FROM webhook_deliveries GROUP BY endpoint_id')
  return Object.fromEntries(rows.map((row) => [row.endpoint_id as string, Number(row.n)]))
}

/** The bodies the sender would send now, by endpoint URL, sorted. */
async function bodies (store: PlantStore): Promise<Record<string, string[]>> {
  const sent: Record<string, string[]> = {}
  for (const delivery of await store.webhooks.claim('test', 1000, 60_000)) (sent[delivery.url] ??= []).push(delivery.body)
  for (const list of Object.values(sent)) list.sort()
  return sent
}

forEachStore(t, (t, _build, databaseUrl) => {
  async function open (t: Parameters<typeof databaseUrl>[0]) {
    const url = await databaseUrl(t)
    return { store: await openTestStore(t, url), sql: await rawSql(t, url) }
  }

  t.test('a change writes no event while no enabled endpoint receives its type', async (t) => {
    const { store, sql } = await open(t)
    await store.create({ id: 1n, name: 'Monstera' })
    const endpoint = await subscribe(store)
    await store.webhooks.updateEndpoint(endpoint.id, { enabled: false })
    await store.create({ id: 2n, name: 'Fern' })
    t.same(await events(sql), [], 'none without an enabled endpoint')
    await subscribe(store, 'https://deletes.example/', ['plant.deleted'])
    await store.create({ id: 3n, name: 'Ivy' })
    await store.update(3n, { name: 'Ivy II' })
    t.same(await events(sql), [], 'none of a type no endpoint receives')
    await store.delete(3n)
    t.same(await events(sql), [['plant.deleted', '3', '{"id":3}']])
  })

  t.test('each change writes one event with its exact data, and no delivery whatever the number of endpoints', async (t) => {
    const { store, sql } = await open(t)
    for (let i = 0; i < 20; i++) await subscribe(store, `https://r${i}.example/`, i % 2 === 0 ? ALL : undefined)
    await store.create({ id: 9007199254740993n, name: 'Monstera "deliciosa"' })
    await store.create({ id: -9223372036854775808n, name: 'Fern', tag: '' })
    t.same(await store.update(9007199254740993n, { tag: 'tab\there \u00e9 \u{1F33F} \u001f' }), { outcome: 'updated', plant: { name: 'Monstera "deliciosa"', tag: 'tab\there \u00e9 \u{1F33F} \u001f' } })
    t.same(await store.update(-9223372036854775808n, { name: 'Fern II', tag: null }), { outcome: 'updated', plant: { name: 'Fern II' } })
    t.equal(await store.delete(9007199254740993n), true)
    const written = await events(sql)
    t.same(written, [
      ['plant.created', '9007199254740993', '{"id":9007199254740993,"name":"Monstera \\"deliciosa\\""}'],
      ['plant.created', '-9223372036854775808', '{"id":-9223372036854775808,"name":"Fern","tag":""}'],
      ['plant.updated', '9007199254740993', JSON.stringify({ id: 0, name: 'Monstera "deliciosa"', tag: 'tab\there \u00e9 \u{1F33F} \u001f' }).replace('0', '9007199254740993')],
      ['plant.updated', '-9223372036854775808', '{"id":-9223372036854775808,"name":"Fern II"}'],
      ['plant.deleted', '9007199254740993', '{"id":9007199254740993}']
    ], 'the plant after the change, ids exact, tag absent when none; {id} for a delete')
    t.same(await deliveries(sql), {}, 'the change itself writes no delivery')
  })

  t.test('the sender expands an event to the endpoints that receive its type, each in its form', async (t) => {
    const { store, sql } = await open(t)
    const origin = await subscribe(store, 'https://origin.example/')
    const all = await subscribe(store, 'https://all.example/', ALL)
    const updates = await subscribe(store, 'https://updates.example/', ['plant.updated'])
    const off = await subscribe(store, 'https://off.example/', ALL)
    await store.webhooks.updateEndpoint(off.id, { enabled: false })
    await store.create({ id: 9007199254740993n, name: 'Ivy', tag: 'climber' })
    await store.update(9007199254740993n, { name: 'Ivy II' })
    await store.delete(9007199254740993n)
    const at = (await sql('SELECT created_at FROM webhook_events ORDER BY id')).map((row) => new Date(Number(row.created_at instanceof Date ? row.created_at.getTime() : row.created_at)).toISOString())
    t.equal(await expandAll(store), 5)
    t.same(await deliveries(sql), { [origin.id]: 1, [all.id]: 3, [updates.id]: 1 })
    t.same(await bodies(store), {
      'https://origin.example/': ['{"id":9007199254740993,"name":"Ivy","tag":"climber"}'],
      'https://all.example/': [
        `{"type":"plant.created","timestamp":"${at[0]}","data":{"id":9007199254740993,"name":"Ivy","tag":"climber"}}`,
        `{"type":"plant.deleted","timestamp":"${at[2]}","data":{"id":9007199254740993}}`,
        `{"type":"plant.updated","timestamp":"${at[1]}","data":{"id":9007199254740993,"name":"Ivy II","tag":"climber"}}`
      ],
      'https://updates.example/': [`{"type":"plant.updated","timestamp":"${at[1]}","data":{"id":9007199254740993,"name":"Ivy II","tag":"climber"}}`]
    }, 'the origin body without events; the Standard Webhooks payload with them, timestamp the commit time')
    const listed = await store.webhooks.listDeliveries(all.id, { limit: 10 })
    t.same(listed?.map((d) => [d.type, d.plantId]).sort(), [['plant.created', 9007199254740993n], ['plant.deleted', 9007199254740993n], ['plant.updated', 9007199254740993n]])
    t.ok(listed?.every((d) => /^msg_[0-9a-f]{28}$/.test(d.id)), 'webhook-ids: msg_ and 28 hex digits')
    t.equal(new Set((await sql('SELECT id FROM webhook_deliveries')).map((row) => row.id)).size, 5, 'each delivery has a webhook-id of its own')
    t.equal(await expandAll(store), 0, 'an event is expanded once')
  })

  t.test('expansion goes in bounded steps, each delivery once', async (t) => {
    const { store, sql } = await open(t)
    for (let i = 0; i < 7; i++) await subscribe(store, `https://r${i}.example/`)
    await store.create({ id: 1n, name: 'A' })
    await store.create({ id: 2n, name: 'B' })
    const steps = []
    for (let more = true; more;) {
      const step = await store.webhooks.expand(3)
      steps.push(step.deliveries)
      more = step.more
    }
    t.same(steps, [3, 3, 3, 3, 2])
    t.same(Object.values(await deliveries(sql)), [2, 2, 2, 2, 2, 2, 2])
    t.equal(Number((await sql('SELECT count(*) AS n FROM webhook_events WHERE fanout IS NOT NULL'))[0].n), 0, 'every event expanded')
  })

  t.test('a step looks at 100 events at most', async (t) => {
    const { store } = await open(t)
    await subscribe(store)
    await Promise.all(Array.from({ length: 101 }, (_, i) => store.create({ id: BigInt(i), name: 'p' })))
    t.same(await store.webhooks.expand(500), { deliveries: 100, more: true })
    t.same(await store.webhooks.expand(500), { deliveries: 1, more: false })
  })

  t.test('a replay, a conflict, a patch that changes nothing and a refused one write nothing; of one id in one batch, only the create that inserts it', async (t) => {
    const { store, sql } = await open(t)
    await subscribe(store, undefined, ALL)
    const results = await Promise.all([
      store.create({ id: 1n, name: 'A' }),
      store.create({ id: 1n, name: 'A' }),
      store.create({ id: 1n, name: 'B' }),
      store.create({ id: 2n, name: 'C' })
    ])
    t.same(results.map((r) => r.outcome), ['created', 'replayed', 'conflict', 'created'])
    t.same(await store.create({ id: 2n, name: 'C' }), { outcome: 'replayed', plant: { name: 'C' } })
    t.same(await store.create({ id: 2n, name: 'D' }), { outcome: 'conflict', plant: { name: 'C' } })
    t.same(await store.update(2n, {}), { outcome: 'unchanged', plant: { name: 'C' } })
    t.same(await store.update(2n, { name: 'C', tag: null }), { outcome: 'unchanged', plant: { name: 'C' } })
    t.equal(await store.update(2n, { name: 'X' }, { ifMatch: [plantEtag({ name: 'not it' })] }), undefined)
    t.equal(await store.delete(2n, { ifMatch: [plantEtag({ name: 'not it' })] }), false)
    t.same(await store.update(2n, { name: 'X' }, { ifNoneMatch: [plantEtag({ name: 'C' })] }), { outcome: 'refused', plant: { name: 'C' } })
    t.equal(await store.delete(2n, { ifNoneMatch: [plantEtag({ name: 'C' })] }), 'refused')
    t.equal(await store.update(3n, { name: 'none' }), undefined)
    t.equal(await store.delete(3n), false)
    t.same((await events(sql)).sort(), [['plant.created', '1', '{"id":1,"name":"A"}'], ['plant.created', '2', '{"id":2,"name":"C"}']], 'one event per plant added, none else')
  })

  t.test('a plant deleted and created again is a new plant.created', async (t) => {
    const { store, sql } = await open(t)
    const endpoint = await subscribe(store)
    await store.create({ id: 5n, name: 'First' })
    t.equal(await store.delete(5n), true)
    await store.create({ id: 5n, name: 'Second' })
    t.same(await events(sql), [['plant.created', '5', '{"id":5,"name":"First"}'], ['plant.created', '5', '{"id":5,"name":"Second"}']])
    await expandAll(store)
    t.same(await deliveries(sql), { [endpoint.id]: 2 })
  })

  t.test('an event goes to the endpoints enabled and receiving its type when the change was made, whenever it is expanded', async (t) => {
    const { store, sql } = await open(t)
    await store.create({ id: 1n, name: 'before' })
    const endpoint = await subscribe(store)
    const later = await subscribe(store, 'https://later.example/', ['plant.deleted'])
    const leaving = await subscribe(store, 'https://leaving.example/')
    const disabled = await subscribe(store, 'https://disabled.example/', ALL)
    await store.webhooks.updateEndpoint(disabled.id, { enabled: false })
    await store.create({ id: 2n, name: 'while enabled' })
    // Changes of the endpoints before the sender expands the event:
    await store.webhooks.updateEndpoint(endpoint.id, { events: ['plant.deleted'] })
    await store.webhooks.updateEndpoint(later.id, { events: null })
    await store.webhooks.updateEndpoint(disabled.id, { enabled: true })
    await store.webhooks.updateEndpoint(leaving.id, { enabled: false })
    t.equal(await expandAll(store), 2)
    t.same((await store.webhooks.listDeliveries(endpoint.id, { limit: 10 }))?.map((d) => [d.plantId, d.status]), [[2n, 'pending']], 'it received plant.created then')
    t.same((await store.webhooks.listDeliveries(later.id, { limit: 10 }))?.length, 0, 'it did not then')
    t.same((await store.webhooks.listDeliveries(disabled.id, { limit: 10 }))?.length, 0, 'it was disabled then')
    t.same((await store.webhooks.listDeliveries(leaving.id, { limit: 10 }))?.map((d) => [d.plantId, d.status, d.lastError]), [[2n, 'failed', STOPPED.disabled]],
      'disabled since: failed, as a disable leaves its pending deliveries, for a manual retry')

    await store.create({ id: 3n, name: 'after the changes' })
    await expandAll(store)
    t.same((await store.webhooks.listDeliveries(endpoint.id, { limit: 10 }))?.length, 1, 'no longer receives plant.created')
    t.same((await store.webhooks.listDeliveries(later.id, { limit: 10 }))?.map((d) => d.plantId), [3n], 'back to the default')
    t.same((await store.webhooks.listDeliveries(disabled.id, { limit: 10 }))?.map((d) => d.plantId), [3n])

    // A deleted endpoint gets nothing, and an event left without any delivery goes.
    await store.webhooks.deleteEndpoint(disabled.id)
    const gone = await subscribe(store, 'https://gone.example/', ['plant.updated'])
    await store.update(3n, { name: 'renamed' })
    t.equal(await store.webhooks.deleteEndpoint(gone.id), true)
    t.equal(await expandAll(store), 0)
    t.same((await events(sql)).filter(([type]) => type === 'plant.updated'), [], 'no event without deliveries')
  })

  t.test('listeners hear of a commit that added events, once it can be expanded; not of one that added none', async (t) => {
    const { store } = await open(t)
    let calls = 0
    const expanded: number[] = []
    const stop = store.webhooks.onDeliveries(() => {
      calls++
      store.webhooks.expand(100).then((step) => expanded.push(step.deliveries), t.error)
    })
    await store.create({ id: 1n, name: 'no endpoint yet' })
    await new Promise((resolve) => setTimeout(resolve, 50))
    t.equal(calls, 0, 'no endpoint: no call')

    await subscribe(store, undefined, ALL)
    await Promise.all([store.create({ id: 2n, name: 'B' }), store.create({ id: 3n, name: 'C' })])
    await store.create({ id: 2n, name: 'B' })
    for (let i = 0; i < 100 && expanded.length < 1; i++) await new Promise((resolve) => setTimeout(resolve, 10))
    t.same(expanded, [2], 'the events are committed when the listener runs')
    t.equal(calls, 1, 'one call for the batch, none for the replay')
    await store.update(2n, { name: 'B2' })
    await store.update(2n, { name: 'B2' })
    await store.delete(3n)
    await new Promise((resolve) => setTimeout(resolve, 100))
    t.equal(calls, 3, 'an update and a delete each, none for a patch that changed nothing')

    stop()
    await store.create({ id: 4n, name: 'D' })
    await new Promise((resolve) => setTimeout(resolve, 50))
    t.equal(calls, 3, 'a stopped listener hears nothing')
  })
})
