import t, { type Test } from 'tap'
import type { PostgresStoreOptions, StoreLogger } from '../../../src/store/postgres/index.js'
import { STOPPED } from '../../../src/store/webhook-common.js'
import { StoreUnavailableError, type PlantStore } from '../../../src/store/types.js'
import { pollUntil } from '../../helpers/bounded.js'
import { expandAll, expandingStore } from '../../helpers/stores.js'
import { connect, freshPostgresUrl, PG_SKIP } from '../../helpers/postgres.js'
import { startProxy } from '../../helpers/proxy.js'

// What only PostgreSQL has: several instances on one database, notifications between them,
// and row locks between a batch of creates and a change to an endpoint.
const skip = PG_SKIP && `PostgreSQL: ${PG_SKIP}`
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A store of the test's own; `expanding`: its changes' events are expanded at once, as the sender would. */
async function open (t: Test, url: string, options: Partial<PostgresStoreOptions> = {}, expanding = true): Promise<PlantStore> {
  const { openPostgresStore } = await import('../../../src/store/postgres/index.js')
  const store = await openPostgresStore({ url, poolSize: 4, timeout: 5000, ...options })
  t.teardown(() => store.close())
  return expanding ? expandingStore(store) : store
}

async function until (condition: () => boolean, what: string, ms = 5000): Promise<void> {
  for (const start = Date.now(); !condition(); await sleep(5)) {
    if (Date.now() - start > ms) throw new Error(`${what}: not in time`)
  }
}

function capture (): { lines: string[], log: StoreLogger } {
  const lines: string[] = []
  return { lines, log: { info: (_obj: unknown, msg?: string) => { lines.push(`info: ${msg}`) }, warn: (_obj: unknown, msg?: string) => { lines.push(`warn: ${msg}`) } } }
}

t.test('instances claiming at once never take the same delivery', { skip }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  const [a, b, c] = await Promise.all([open(t, url), open(t, url), open(t, url)])
  await a.webhooks.createEndpoint({ url: 'https://a.example/', secret: SECRET })
  for (let i = 0; i < 600; i += 200) await Promise.all(Array.from({ length: 200 }, (_, j) => a.create({ id: BigInt(i + j), name: 'p' })))
  const seen: string[] = []
  await Promise.all([a, b, c].map(async (store, n) => {
    for (let got = await store.webhooks.claim(`owner ${n}`, 7, 60000); got.length > 0; got = await store.webhooks.claim(`owner ${n}`, 7, 60000)) {
      seen.push(...got.map((d) => d.id))
    }
  }))
  t.equal(seen.length, 600, 'every delivery claimed')
  t.equal(new Set(seen).size, 600, 'none twice')
})

t.test('a commit that adds events wakes every instance once, its own through no notification', { skip }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  const [a, b] = await Promise.all([open(t, url, {}, false), open(t, url, {}, false)])
  const heard = { a: 0, b: 0 }
  a.webhooks.onDeliveries(() => { heard.a++ })
  b.webhooks.onDeliveries(() => { heard.b++ })
  const endpoint = await a.webhooks.createEndpoint({ url: 'https://a.example/', secret: SECRET })
  await sleep(100)
  await a.create({ id: 1n, name: 'p' })
  t.equal(heard.a, 1, 'the instance that committed, at once')
  await until(() => heard.b === 1, 'the other instance')
  await a.create({ id: 1n, name: 'p' })
  await sleep(100)
  t.same(heard, { a: 1, b: 1 }, 'a replay wakes nobody')
  await expandAll(a)
  await sleep(100)
  t.same(heard, { a: 1, b: 1 }, 'an expansion wakes nobody: its sender claims what it added')

  const [claimed] = await b.webhooks.claim('b', 1, 60000)
  await b.webhooks.release('b')
  await until(() => heard.a === 2, 'a release wakes the others')
  await a.webhooks.finish('b', claimed.id, { result: 'failed', status: 500 })
  await a.webhooks.retryDelivery(endpoint.id, claimed.id)
  await until(() => heard.b === 2, 'a retry wakes the others')
  await sleep(100)
  t.same(heard, { a: 3, b: 2 })
})

t.test('notifications come back by themselves after the connection is lost', { skip }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  const name = new URL(url).pathname.slice(1)
  // ALTER DATABASE from another database: a session cannot lock its own out.
  const admin = await connect(t, process.env.PLANT_STORE_TEST_PG_URL as string)
  const { lines, log } = capture()
  // The events are not expanded here: an expansion needs a connection, which the outage refuses.
  const [a, b] = await Promise.all([open(t, url, {}, false), open(t, url, { log }, false)])
  await a.webhooks.createEndpoint({ url: 'https://a.example/', secret: SECRET })
  let heard = 0
  b.webhooks.onDeliveries(() => { heard++ })
  for (let n = 0; n === 0; await sleep(10)) {
    n = (await admin.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'plant-store-listen' AND datname = $1", [name])).rows[0].n
  }

  // An outage: the listening connection is ended, and new connections are refused for a while.
  await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`)
  t.teardown(() => admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`))
  await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'plant-store-listen' AND datname = $1", [name])
  await until(() => lines.length > 0, 'the loss is logged')
  await sleep(300)
  await a.create({ id: 1n, name: 'sent during the outage' })
  t.equal(heard, 0, 'missed while disconnected')
  await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`)
  await until(() => heard === 1, 'woken on reconnection, for what it may have missed', 10000)
  t.same(lines, [
    'warn: PostgreSQL notifications are unavailable: webhook deliveries wait for the next poll until they are back',
    'info: PostgreSQL notifications are back'
  ], 'one line when lost, one when back')
  await a.create({ id: 2n, name: 'after' })
  await until(() => heard === 2, 'notified again')
})

t.test('closing a store ends its listening connection, even one still connecting', { skip }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  const admin = await connect(t, url)
  const { openPostgresStore } = await import('../../../src/store/postgres/index.js')
  const early = await openPostgresStore({ url, poolSize: 1, timeout: 5000 })
  early.webhooks.onDeliveries(() => {})
  await early.close()
  const late = await openPostgresStore({ url, poolSize: 1, timeout: 5000 })
  late.webhooks.onDeliveries(() => {})
  await sleep(200)
  await late.close()
  // A backend leaves pg_stat_activity a moment after its client has gone.
  const left = async () => (await admin.query("SELECT application_name FROM pg_stat_activity WHERE application_name LIKE 'plant-store%' AND datname = current_database()")).rows
  for (let i = 0; i < 100 && (await left()).length > 0; i++) await sleep(20)
  t.same(await left(), [], 'no connection left')
  await t.rejects(late.webhooks.listEndpoints(), StoreUnavailableError, 'a closed store is unavailable')
})

t.test('closing a store while it reconnects ends the attempt under way', { skip }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  const name = new URL(url).pathname.slice(1)
  const admin = await connect(t, url)
  const proxy = await startProxy(t, url)
  const { lines, log } = capture()
  const { openPostgresStore } = await import('../../../src/store/postgres/index.js')
  // Migrated first: the store under test spends none of its short timeout migrating.
  await (await openPostgresStore({ url, poolSize: 1, timeout: 5000 })).close()
  const store = await openPostgresStore({ url: proxy.url, poolSize: 1, timeout: 500, log })
  store.webhooks.onDeliveries(() => {})
  const listening = async () => (await admin.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'plant-store-listen' AND datname = $1", [name])).rows[0].n
  await pollUntil(async () => await listening() > 0, 30_000, 'the store\'s LISTEN connection', 10)
  // New connections hang from now on; the listening one is ended, and its first new attempt hangs.
  proxy.stall({ newOnly: true })
  await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'plant-store-listen' AND datname = $1", [name])
  await until(() => lines.length > 0, 'the loss is logged')
  await sleep(200)
  const started = Date.now()
  await store.close()
  t.ok(Date.now() - started < 2000, 'the close waits for the attempt, bounded by the timeout')
  await sleep(300)
  t.same(lines.length, 1, 'no attempt after the close')
})

t.test('a create never waits for an endpoint; an expansion waits for a disable in progress, then adds the delivery as failed', { skip }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  const store = await open(t, url, {}, false)
  const admin = await connect(t, url)
  const endpoint = await store.webhooks.createEndpoint({ url: 'https://a.example/', secret: SECRET })
  await admin.query('BEGIN')
  await admin.query('SELECT FROM webhook_endpoints WHERE id = $1 FOR UPDATE', [endpoint.id])
  t.equal((await store.create({ id: 1n, name: 'p' })).outcome, 'created', 'the create does not wait for the lock')
  let done = false
  const expansion = expandAll(store).then((added) => { done = true; return added })
  await sleep(200)
  t.equal(done, false, 'the expansion waits for the lock')
  await admin.query('UPDATE webhook_endpoints SET enabled = false WHERE id = $1', [endpoint.id])
  await admin.query('COMMIT')
  t.equal(await expansion, 1)
  const [delivery] = await store.webhooks.listDeliveries(endpoint.id, { limit: 5 }) ?? []
  t.same([delivery.status, delivery.lastError], ['failed', STOPPED.disabled], 'the endpoint as the disable left it: enabled at the change, disabled since')
})

t.test('a disable waits for an expansion in progress, then stops the deliveries it added', { skip }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  const store = await open(t, url)
  const admin = await connect(t, url)
  const endpoint = await store.webhooks.createEndpoint({ url: 'https://a.example/', secret: SECRET })
  // An expansion in flight, as its statement holds it: a KEY SHARE lock, a delivery not yet committed.
  await admin.query('BEGIN')
  await admin.query('SELECT FROM webhook_endpoints WHERE enabled FOR KEY SHARE')
  await admin.query("INSERT INTO webhook_events (plant_id, body) VALUES (1, '{}')")
  await admin.query("INSERT INTO webhook_deliveries (id, event_id, endpoint_id, status, next_attempt_at) SELECT 'msg_1', max(id), $1, 'pending', now() FROM webhook_events", [endpoint.id])
  const disable = store.webhooks.updateEndpoint(endpoint.id, { enabled: false })
  await sleep(200)
  await admin.query('COMMIT')
  t.equal((await disable)?.enabled, false)
  const [delivery] = await store.webhooks.listDeliveries(endpoint.id, { limit: 5 }) ?? []
  t.same([delivery.id, delivery.status, delivery.lastError], ['msg_1', 'failed', STOPPED.disabled])
})

t.test('a statement the server refuses rolls the whole change back', { skip }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  const store = await open(t, url)
  const endpoint = await store.webhooks.createEndpoint({ url: 'https://a.example/', secret: SECRET })
  await store.create({ id: 1n, name: 'p' })
  // PostgreSQL text cannot hold U+0000 (the routes refuse it before the store sees it).
  await t.rejects(store.webhooks.updateEndpoint(endpoint.id, { enabled: false, url: 'https://a.example/\u0000' }))
  t.equal((await store.webhooks.getEndpoint(endpoint.id))?.enabled, true)
  t.same((await store.webhooks.listDeliveries(endpoint.id, { limit: 5 }))?.map((d) => d.status), ['pending'])
})
