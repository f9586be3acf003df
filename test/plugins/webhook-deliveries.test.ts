import { hash } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import Fastify, { type FastifyInstance } from 'fastify'
import t from 'tap'
import webhooks from '../../plugins/webhooks/index.js'
import { STOPPED } from '../../src/store/webhook-common.js'
import { openSqliteStore } from '../../src/store/sqlite/index.js'
import { AUTH, assertError, postPlant } from '../helpers/build.js'
import { list, walk } from '../helpers/list.js'
import { startReceiver } from '../helpers/receiver.js'
import { expandAll, forEachStore } from '../helpers/stores.js'

// Endpoints here are receivers on 127.0.0.1 (WEBHOOK_ALLOW_PRIVATE=true): the sender runs
// in the app, and its attempts must reach nothing else.
const PRIVATE = { WEBHOOK_ALLOW_PRIVATE: 'true' }

async function subscribe (app: FastifyInstance, url: string): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/webhooks', headers: { ...AUTH, 'content-type': 'application/json' }, payload: { url } })
  return res.json().id
}

async function until (what: string, check: () => Promise<boolean>, timeout = 10_000): Promise<void> {
  for (const deadline = Date.now() + timeout; !(await check()); await sleep(20)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
  }
}

const deliveries = async (app: FastifyInstance, endpoint: string) => (await app.inject({ url: `/webhooks/${endpoint}/deliveries?limit=100`, headers: AUTH })).json()

forEachStore(t, (t, build) => {
  t.test('deliveries page by page, newest first, with a next link while more follow', async (t) => {
    const app = await build(t, PRIVATE)
    const receiver = await startReceiver(t)
    const endpoint = await subscribe(app, `${receiver.origin}/hooks`)
    let res = await app.inject({ url: `/webhooks/${endpoint}/deliveries`, headers: AUTH })
    t.same([res.statusCode, res.body, res.headers.link], [200, '[]', undefined], 'none yet: [] and no link')

    const ids = ['1', '9007199254740993', '-9223372036854775808', '4', '5']
    for (const id of ids) {
      t.equal((await postPlant(app, `{"id":${id},"name":"plant ${id}"}`)).statusCode, 200)
      await sleep(3)
    }
    await receiver.waitFor(5)
    const pages = await walk(app, `/webhooks/${endpoint}/deliveries?limit=2`)
    t.same(pages.map((page) => page.length), [2, 2, 1], 'no empty page at the end')
    const [first] = pages
    t.same(new Set(pages.flat().map((d) => d.id)).size, 5, 'each delivery once')
    t.same(Object.keys(first[0]).sort().filter((key) => !['lastError', 'lastStatus', 'nextAttemptAt'].includes(key)),
      ['attempts', 'createdAt', 'id', 'plantId', 'status', 'type'])
    t.ok(pages.flat().every((d) => (d as { type?: string }).type === 'plant.created'), 'each lists its type')

    res = (await list(app, `/webhooks/${endpoint}/deliveries?limit=2`)).res
    t.match(res.headers.link, new RegExp(`^</webhooks/${endpoint}/deliveries\\?limit=2&cursor=[A-Za-z0-9_-]+>; rel="next"$`))

    res = await app.inject({ url: `/webhooks/${endpoint}/deliveries`, headers: AUTH })
    t.same([res.json().length, res.headers.link], [5, undefined], 'the default limit holds them all')
    t.same([...res.body.matchAll(/"plantId":(-?\d+)/g)].map((match) => match[1]), [...ids].reverse(), 'newest first, plantId an exact JSON integer')
    t.same(pages.flat().map((d) => d.id), res.json().map((d: { id: string }) => d.id), 'the pages together are the whole list')
  })

  t.test('the query rules of the plants listing: limit, repeats, unknown parameters and altered cursors are 400', async (t) => {
    const app = await build(t, PRIVATE)
    const receiver = await startReceiver(t)
    const [a, b] = [await subscribe(app, `${receiver.origin}/a`), await subscribe(app, `${receiver.origin}/b`)]
    for (const id of [1, 2, 3]) await postPlant(app, { id, name: `p${id}` })
    const base = `/webhooks/${a}/deliveries`
    // The sender expands each create's event into its deliveries.
    await until('the deliveries are listed', async () => (await deliveries(app, a)).length === 3)
    for (const query of ['limit=0', 'limit=101', 'limit=abc', 'limit=010', 'limit=1.5']) {
      assertError(t, await app.inject({ url: `${base}?${query}`, headers: AUTH }), 400, /^querystring\/limit must be an integer from 1 to 100/)
    }
    assertError(t, await app.inject({ url: `${base}?limit=1&limit=2`, headers: AUTH }), 400, /^querystring\/limit is repeated/)
    assertError(t, await app.inject({ url: `${base}?offset=1`, headers: AUTH }), 400, /^querystring\/offset is not a parameter of this operation$/)

    const { next } = await list(app, `${base}?limit=1`)
    const cursor = new URLSearchParams((next as string).split('?')[1]).get('cursor') as string
    t.equal((await app.inject({ url: next as string, headers: AUTH })).statusCode, 200)
    const altered = cursor.slice(0, 5) + (cursor[5] === 'A' ? 'B' : 'A') + cursor.slice(6)
    const plants = (await list(app, '/plants?limit=1')).next as string
    for (const wrong of [altered, cursor.slice(0, -1), 'abc', new URLSearchParams(plants.split('?')[1]).get('cursor') as string]) {
      assertError(t, await app.inject({ url: `${base}?cursor=${wrong}`, headers: AUTH }), 400, /^querystring\/cursor is not one this service gave/)
    }
    // Another endpoint's cursor.
    assertError(t, await app.inject({ url: `/webhooks/${b}/deliveries?cursor=${cursor}`, headers: AUTH }), 400, /cursor/)

    // Positions made up by hand (a time no date holds, a NUL in the id, a real one), sealed the way anyone
    // could before cursors were keyed: none reaches the store.
    const listing = `webhook ${a}`
    for (const [at, id] of [[2n ** 63n - 1n, 'msg_1'], [1n, 'msg_\u0000'], [-(2n ** 63n), '\u0000'], [BigInt(Date.now()), 'msg_zzz']] as const) {
      const position = Buffer.alloc(9)
      position[0] = 2
      position.writeBigInt64BE(at, 1)
      const whole = Buffer.concat([position, Buffer.from(id)])
      const check = hash('sha256', Buffer.concat([Buffer.from('plant-store cursor'), whole, Buffer.from(listing)]), 'buffer').subarray(0, 8)
      const forged = Buffer.concat([whole, check]).toString('base64url')
      assertError(t, await app.inject({ url: `${base}?cursor=${forged}`, headers: AUTH }), 400, /^querystring\/cursor is not one this service gave/)
    }
  })

  t.test('retry: 202, and one more attempt with the same webhook-id, whatever the status', async (t) => {
    const app = await build(t, { ...PRIVATE, WEBHOOK_RETRY_SCHEDULE: '20ms' })
    const receiver = await startReceiver(t, (_, response) => { response.writeHead(500).end() })
    const endpoint = await subscribe(app, `${receiver.origin}/hooks`)
    await postPlant(app, { id: 1, name: 'p' })
    await until('the delivery failed', async () => (await deliveries(app, endpoint))[0]?.status === 'failed')
    const [failed] = await deliveries(app, endpoint)
    t.match(failed, { status: 'failed', attempts: 2, lastStatus: 500 })

    receiver.answer((_, response) => { response.writeHead(204).end() })
    const res = await app.inject({ method: 'POST', url: `/webhooks/${endpoint}/deliveries/${failed.id}/retry`, headers: AUTH })
    t.equal(res.statusCode, 202)
    t.equal(res.body, '')
    const requests = await receiver.waitFor(3)
    t.same(requests.map((r) => r.headers['webhook-id']), [failed.id, failed.id, failed.id])
    await until('the retry succeeded', async () => (await deliveries(app, endpoint))[0].status === 'succeeded')
    t.match((await deliveries(app, endpoint))[0], { status: 'succeeded', attempts: 3, lastStatus: 204 })

    assertError(t, await app.inject({ method: 'POST', url: `/webhooks/${endpoint}/deliveries/msg_none/retry`, headers: AUTH }), 404, /^This endpoint has no delivery with this id\.$/)
    const other = await subscribe(app, `${receiver.origin}/other`)
    assertError(t, await app.inject({ method: 'POST', url: `/webhooks/${other}/deliveries/${failed.id}/retry`, headers: AUTH }), 404, /no delivery with this id/)
    await app.inject({ method: 'PATCH', url: `/webhooks/${endpoint}`, headers: { ...AUTH, 'content-type': 'application/json' }, payload: { enabled: false } })
    assertError(t, await app.inject({ method: 'POST', url: `/webhooks/${endpoint}/deliveries/${failed.id}/retry`, headers: AUTH }), 409, /^The endpoint is disabled: enable it/)
  })

  t.test('disabling an endpoint ends its pending deliveries; deleting it removes them', async (t) => {
    const app = await build(t, { ...PRIVATE, WEBHOOK_RETRY_SCHEDULE: '1h' })
    const receiver = await startReceiver(t, (_, response) => { response.writeHead(503).end() })
    const endpoint = await subscribe(app, `${receiver.origin}/hooks`)
    await postPlant(app, { id: 1, name: 'p' })
    await until('the first attempt failed', async () => (await deliveries(app, endpoint))[0]?.attempts === 1)
    t.match((await deliveries(app, endpoint))[0], { status: 'pending', attempts: 1, lastStatus: 503 })
    await app.inject({ method: 'PATCH', url: `/webhooks/${endpoint}`, headers: { ...AUTH, 'content-type': 'application/json' }, payload: { enabled: false } })
    t.match((await deliveries(app, endpoint))[0], { status: 'failed', attempts: 1, lastError: STOPPED.disabled })
    t.equal((await deliveries(app, endpoint))[0].nextAttemptAt, undefined)

    t.equal((await app.inject({ method: 'DELETE', url: `/webhooks/${endpoint}`, headers: AUTH })).statusCode, 204)
    assertError(t, await app.inject({ url: `/webhooks/${endpoint}/deliveries`, headers: AUTH }), 404)
  })
})

t.test('the plugin alone, under a prefix, on a host of its own', async (t) => {
  const store = openSqliteStore({ path: ':memory:' })
  const app = Fastify()
  t.teardown(async () => { await app.close(); await store.close() })
  await app.register(webhooks, { store: store.webhooks, prefix: '/v1' })
  const created = await app.inject({ method: 'POST', url: '/v1/webhooks', headers: { 'content-type': 'application/json' }, payload: { url: 'https://a.example/' } })
  t.equal(created.statusCode, 201)
  assertError(t, await app.inject({ method: 'POST', url: '/v1/webhooks', headers: { 'content-type': 'application/json' }, payload: { url: 'http://127.0.0.1/' } }), 400, /WEBHOOK_ALLOW_PRIVATE/)
  // Three deliveries, written through the store as a create would.
  for (const id of [1n, 2n, 3n]) await store.create({ id, name: 'p' })
  await expandAll(store)
  const res = await app.inject(`/v1/webhooks/${created.json().id}/deliveries?limit=2`)
  t.match(res.headers.link, new RegExp(`^</v1/webhooks/${created.json().id}/deliveries\\?limit=2&cursor=`), 'the next link keeps the prefix')

  await t.rejects(async () => { await Fastify().register(webhooks, {} as never).ready() }, /webhooks: options.store must be a WebhookStore/)
  await t.rejects(async () => { await Fastify().register(webhooks, { store: { ...store.webhooks, cursorKey: Buffer.alloc(8) } }).ready() }, /webhooks: options.store.cursorKey must be a Buffer of 16 bytes or more/)
  await t.rejects(async () => { await Fastify().register(webhooks, { store: store.webhooks, allowPrivate: 'yes' as never }).ready() }, /webhooks: options.allowPrivate must be a boolean/)
  for (const endpointLimit of [0, 1.5, '10' as never]) {
    await t.rejects(async () => { await Fastify().register(webhooks, { store: store.webhooks, endpointLimit }).ready() }, /webhooks: options.endpointLimit must be a positive integer/)
  }
})
