import t, { type Test } from 'tap'
import type { PlantStore } from '../../../src/store/types.js'
import { STOPPED } from '../../../src/store/webhook-common.js'
import type { AttemptOutcome, ClaimedDelivery } from '../../../src/store/webhook-types.js'
import { expandAll } from '../../helpers/stores.js'
import { connect, freshPostgresUrl, PG_SKIP } from '../../helpers/postgres.js'
import { startProxy } from '../../helpers/proxy.js'

// PostgreSQL records the outcomes of one turn of the event loop with one statement: observed
// on the wire (a proxy counts the statements), and compared row for row with the same outcomes
// recorded one at a time, each awaited before the next, on a database of its own.
const skip = PG_SKIP && `PostgreSQL: ${PG_SKIP}`
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function open (t: Test, url: string): Promise<PlantStore> {
  const { openPostgresStore } = await import('../../../src/store/postgres/index.js')
  const store = await openPostgresStore({ url, poolSize: 4, timeout: 5000 })
  t.teardown(() => store.close())
  return store
}

/**
 * Every delivery as a row of text, by endpoint URL and plant: ids differ between databases,
 * and so does the end of a lease still held (the time of its claim).
 */
async function rows (t: Test, url: string): Promise<string[]> {
  const db = await connect(t, url)
  const { rows } = await db.query(`SELECT e.url, e.enabled, v.plant_id, d.status, d.attempts, d.last_status, d.last_error,
      CASE WHEN d.lease_owner IS NULL THEN d.next_attempt_at END AS next_attempt_at, d.lease_owner, d.lease_until IS NOT NULL AS leased
    FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id JOIN webhook_events v ON v.id = d.event_id
    ORDER BY e.url, v.plant_id`)
  return rows.map((row) => JSON.stringify(row))
}

/** The deliveries claimed by `owner`, by endpoint URL and plant id: `https://a.example/ 1`. */
async function claimAll (store: PlantStore, owner: string): Promise<Map<string, ClaimedDelivery>> {
  await expandAll(store)
  const claimed = await store.webhooks.claim(owner, 1000, 60_000)
  return new Map(claimed.map((d) => [`${d.url} ${JSON.parse(d.body).id as number}`, d]))
}

const at = new Date(Date.now() + 3_600_000)

// Arrival order matters where one outcome changes another's row: a 410 stops the endpoint's
// pending deliveries (c 1 lands before it, c 3 after it finds its delivery stopped), and a
// second outcome for one delivery finds its lease ended (b 1). a 6 has lost its lease.
const MIXED: Array<[string, string, AttemptOutcome]> = [
  ['https://a.example/ 1', 's', { result: 'succeeded', status: 200 }],
  ['https://a.example/ 2', 's', { result: 'retry', at, status: 503, error: 'HTTP 503' }],
  ['https://a.example/ 3', 's', { result: 'retry', at, error: 'refused: "x", \\ {NULL} \u00e9' }],
  ['https://a.example/ 4', 's', { result: 'failed', status: 500, error: 'HTTP 500' }],
  ['https://a.example/ 5', 's', { result: 'failed', error: 'timed out after 15000 ms' }],
  ['https://a.example/ 6', 's', { result: 'succeeded', status: 200 }],
  ['https://b.example/ 1', 's', { result: 'retry', at, status: 429, error: 'HTTP 429' }],
  ['https://b.example/ 2', 's', { result: 'succeeded', status: 204 }],
  ['https://b.example/ 1', 's', { result: 'succeeded', status: 200 }],
  ['https://c.example/ 1', 's', { result: 'succeeded', status: 200 }],
  ['https://c.example/ 2', 's', { result: 'gone', status: 410 }],
  ['https://c.example/ 3', 's', { result: 'succeeded', status: 200 }],
  ['https://b.example/ 3', 'other', { result: 'failed', status: 500 }]
]

/** Three endpoints, six plants, every delivery claimed by `s`; then another instance takes a 6 over. */
async function setUp (t: Test, url: string, store: PlantStore): Promise<Map<string, ClaimedDelivery>> {
  for (const host of ['a', 'b', 'c']) await store.webhooks.createEndpoint({ url: `https://${host}.example/`, secret: SECRET })
  for (let id = 1n; id <= 6n; id++) await store.create({ id, name: `p${id}` })
  const claimed = await claimAll(store, 's')
  const db = await connect(t, url)
  await db.query("UPDATE webhook_deliveries SET lease_owner = 'other' WHERE id = $1", [claimed.get('https://a.example/ 6')?.id])
  return claimed
}

t.test('the outcomes of one turn land with one statement, each as it would alone', { skip }, async (t) => {
  const [batchUrl, aloneUrl] = [await freshPostgresUrl(t) as string, await freshPostgresUrl(t) as string]
  const proxy = await startProxy(t, batchUrl)
  const [batched, alone] = [await open(t, proxy.url), await open(t, aloneUrl)]
  const [mine, theirs] = [await setUp(t, batchUrl, batched), await setUp(t, aloneUrl, alone)]

  for (const [key, owner, outcome] of MIXED) await alone.webhooks.finish(owner, theirs.get(key)?.id as string, outcome)
  const finish = ([key, owner, outcome]: typeof MIXED[number]) => batched.webhooks.finish(owner, mine.get(key)?.id as string, outcome)
  // One turn before the 410, then one with it; every caller hears.
  proxy.statements = 0
  t.same(await Promise.all(MIXED.slice(0, 10).map(finish)), MIXED.slice(0, 10).map(() => undefined))
  // Each statement of outcomes is followed by one that marks the endpoints failing (or no longer).
  t.equal(proxy.statements, 4, 'one statement, and a second from the second outcome of b 1 on, each with its failing_since update')
  t.same(await Promise.all(MIXED.slice(10).map(finish)), MIXED.slice(10).map(() => undefined))

  const [got, expected] = [await rows(t, batchUrl), await rows(t, aloneUrl)]
  t.same(got, expected, 'the same rows as one at a time')
  t.match(got.find((row) => row.includes('"https://a.example/","enabled":true,"plant_id":"6"')), /"status":"pending","attempts":0,.*"lease_owner":"other"/, 'a lost lease: nothing changes')
  t.match(got.find((row) => row.includes('"https://b.example/","enabled":true,"plant_id":"1"')), /"status":"pending","attempts":1,"last_status":429/, 'a second outcome finds the lease ended')
  t.match(got.find((row) => row.includes('"plant_id":"3"') && row.includes('c.example')), `"last_error":"${STOPPED.gone}"`, 'after a 410, its endpoint\'s deliveries stopped')
  t.match(got.find((row) => row.includes('"plant_id":"1"') && row.includes('c.example')), /"status":"succeeded"/, 'before it, landed')
})

t.test('a statement holds 500 outcomes at most', { skip }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  const proxy = await startProxy(t, url)
  const store = await open(t, proxy.url)
  await store.webhooks.createEndpoint({ url: 'https://a.example/', secret: SECRET })
  await Promise.all(Array.from({ length: 501 }, (_, i) => store.create({ id: BigInt(i), name: 'p' })))
  await expandAll(store)
  const claimed = await store.webhooks.claim('s', 1000, 60_000)
  t.equal(claimed.length, 501)
  proxy.statements = 0
  await Promise.all(claimed.map((d) => store.webhooks.finish('s', d.id, { result: 'succeeded', status: 200 })))
  t.equal(proxy.statements, 4, '500 outcomes, then 1, each with its failing_since update')
  const db = await connect(t, url)
  t.same((await db.query('SELECT status, attempts, count(*)::int FROM webhook_deliveries GROUP BY 1, 2')).rows, [{ status: 'succeeded', attempts: 1, count: 501 }])
})

t.test('an error of the statement reaches each of its callers, and changes none of its rows', { skip }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  const store = await open(t, url)
  await store.webhooks.createEndpoint({ url: 'https://a.example/', secret: SECRET })
  for (const id of [1n, 2n]) await store.create({ id, name: 'p' })
  await expandAll(store)
  const [x, y] = await store.webhooks.claim('s', 10, 60_000)
  // PostgreSQL text cannot hold U+0000 (an attempt's errors never do): the statement is refused.
  const results = await Promise.allSettled([
    store.webhooks.finish('s', x.id, { result: 'succeeded', status: 200 }),
    store.webhooks.finish('s', y.id, { result: 'failed', error: 'bad \u0000' }),
    store.webhooks.finish('s', x.id, { result: 'failed', status: 500 })
  ])
  t.equal(results[0].status, 'rejected')
  t.equal(results[1].status, 'rejected')
  t.equal((results[0] as PromiseRejectedResult).reason, (results[1] as PromiseRejectedResult).reason, 'the same error, to both')
  t.equal(results[2].status, 'fulfilled', 'the next statement of the turn, on its own')
  const db = await connect(t, url)
  const { rows } = await db.query('SELECT id, status, attempts, last_status, lease_owner FROM webhook_deliveries ORDER BY id')
  t.same(rows.find((row) => row.id === x.id), { id: x.id, status: 'failed', attempts: 1, last_status: 500, lease_owner: null }, 'as if the refused statement never ran')
  t.same(rows.find((row) => row.id === y.id), { id: y.id, status: 'pending', attempts: 0, last_status: null, lease_owner: 's' })
})

t.test('a batch and a disable of its deliveries\' endpoint take turns, never a deadlock', { skip }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  const store = await open(t, url)
  const admin = await connect(t, url)
  const endpoint = await store.webhooks.createEndpoint({ url: 'https://a.example/', secret: SECRET })
  for (const id of [1n, 2n]) await store.create({ id, name: 'p' })
  await expandAll(store)
  const ids = (await store.webhooks.claim('s', 10, 60_000)).map((d) => d.id).sort()
  // A disable under way, as updateEndpoint runs it: the endpoint locked, then its deliveries,
  // the second one first.
  await admin.query('BEGIN')
  await admin.query('SELECT FROM webhook_endpoints WHERE id = $1 FOR UPDATE', [endpoint.id])
  await admin.query('SELECT FROM webhook_deliveries WHERE id = $1 FOR UPDATE', [ids[1]])
  let done = false
  const finishes = Promise.all(ids.map((id) => store.webhooks.finish('s', id, { result: 'succeeded', status: 200 }))).then(() => { done = true })
  await sleep(200)
  t.equal(done, false, 'the batch waits for the endpoint')
  await admin.query(`UPDATE webhook_deliveries SET status = 'failed', last_error = $2, next_attempt_at = NULL, lease_owner = NULL, lease_until = NULL
    WHERE endpoint_id = $1 AND status = 'pending'`, [endpoint.id, STOPPED.disabled])
  await admin.query('UPDATE webhook_endpoints SET enabled = false WHERE id = $1', [endpoint.id])
  await admin.query('COMMIT')
  await finishes
  const { rows } = await admin.query('SELECT status, attempts, last_error FROM webhook_deliveries ORDER BY id')
  t.same(rows, ids.map(() => ({ status: 'failed', attempts: 0, last_error: STOPPED.disabled })), 'the outcomes came after the disable: they change nothing')
})

t.test('the outcomes that come while a statement is being written go together in the next', { skip }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  const proxy = await startProxy(t, url)
  const store = await open(t, proxy.url)
  await store.webhooks.createEndpoint({ url: 'https://a.example/', secret: SECRET })
  for (let id = 1n; id <= 6n; id++) await store.create({ id, name: `p${id}` })
  await expandAll(store)
  const claimed = await store.webhooks.claim('s', 10, 60_000)
  t.equal(claimed.length, 6)
  const finish = (i: number) => store.webhooks.finish('s', claimed[i].id, { result: 'succeeded', status: 200 })
  proxy.statements = 0
  // The first alone; then, in turns of their own while it is written, five more.
  const first = finish(0)
  await new Promise((resolve) => setImmediate(resolve))
  const later: Array<Promise<void>> = []
  for (let i = 1; i < 6; i++) {
    later.push(finish(i))
    await new Promise((resolve) => setImmediate(resolve))
  }
  await Promise.all([first, ...later])
  t.equal(proxy.statements, 4, 'the first, then the five that waited for it, each with its failing_since update')
  const db = await connect(t, url)
  t.same((await db.query('SELECT status, count(*)::int FROM webhook_deliveries GROUP BY 1')).rows, [{ status: 'succeeded', count: 6 }])
})
