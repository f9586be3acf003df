import t from 'tap'
import { STOPPED } from '../../../src/store/webhook-common.js'
import type { Delivery } from '../../../src/store/webhook-types.js'
import { expandingStore, forEachStore, openTestStore, rawSql } from '../../helpers/stores.js'

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
const NEXT_SECRET = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD'

forEachStore(t, (t, _build, databaseUrl) => {
  async function open (t: Parameters<typeof databaseUrl>[0]) {
    const url = await databaseUrl(t)
    const store = expandingStore(await openTestStore(t, url))
    return { store, webhooks: store.webhooks, sql: await rawSql(t, url) }
  }

  t.test('create, read, list, update: never a secret, description absent when none', async (t) => {
    const { webhooks } = await open(t)
    const before = Date.now()
    const a = await webhooks.createEndpoint({ url: 'https://a.example/hook', secret: SECRET })
    const b = await webhooks.createEndpoint({ url: 'http://b.example/', description: 'the b team', secret: SECRET })
    t.match(a.id, /^ep_[0-9a-f]{32}$/)
    t.not(a.id, b.id)
    t.same(Object.keys(a).sort(), ['createdAt', 'enabled', 'id', 'url'])
    t.same({ ...b, createdAt: undefined }, { id: b.id, url: 'http://b.example/', description: 'the b team', enabled: true, createdAt: undefined })
    t.ok(a.createdAt.getTime() >= before - 5 && a.createdAt.getTime() <= Date.now() + 5, 'createdAt is now')

    t.same(await webhooks.getEndpoint(a.id), a)
    t.equal(await webhooks.getEndpoint('ep_none'), undefined)
    t.same(await webhooks.listEndpoints(), [a, b], 'oldest first')

    t.same(await webhooks.updateEndpoint(a.id, { description: 'now described' }), { ...a, description: 'now described' })
    t.same(await webhooks.updateEndpoint(a.id, { url: 'https://a.example/v2', enabled: false }), { ...a, url: 'https://a.example/v2', description: 'now described', enabled: false })
    t.same(await webhooks.updateEndpoint(a.id, {}), { ...a, url: 'https://a.example/v2', description: 'now described', enabled: false }, 'an empty patch changes nothing')
    t.same(await webhooks.updateEndpoint(a.id, { enabled: true }), { ...a, url: 'https://a.example/v2', description: 'now described', enabled: true })
    t.equal(await webhooks.updateEndpoint('ep_none', { enabled: true }), undefined)
    t.equal(await webhooks.updateEndpoint('ep_none', { enabled: false }), undefined)
  })

  t.test('disabling an endpoint ends its pending deliveries as failed, leaving the others', async (t) => {
    const { store, webhooks } = await open(t)
    const a = await webhooks.createEndpoint({ url: 'https://a.example/', secret: SECRET })
    const b = await webhooks.createEndpoint({ url: 'https://b.example/', secret: SECRET })
    await store.create({ id: 1n, name: 'one' })
    await webhooks.updateEndpoint(a.id, { enabled: false })
    const [stopped] = await webhooks.listDeliveries(a.id, { limit: 5 }) as Delivery[]
    t.same({ status: stopped.status, attempts: stopped.attempts, lastError: stopped.lastError, nextAttemptAt: stopped.nextAttemptAt },
      { status: 'failed', attempts: 0, lastError: STOPPED.disabled, nextAttemptAt: undefined })
    const [other] = await webhooks.listDeliveries(b.id, { limit: 5 }) as Delivery[]
    t.equal(other.status, 'pending')
    t.ok(other.nextAttemptAt instanceof Date, 'a pending delivery says when it is due')
  })

  t.test('delete: the endpoint, its deliveries, and the events left without any', async (t) => {
    const { store, webhooks, sql } = await open(t)
    const a = await webhooks.createEndpoint({ url: 'https://a.example/', secret: SECRET })
    await store.create({ id: 1n, name: 'only a' })
    const b = await webhooks.createEndpoint({ url: 'https://b.example/', secret: SECRET })
    await store.create({ id: 2n, name: 'a and b' })
    t.equal(await webhooks.deleteEndpoint(a.id), true)
    t.equal(await webhooks.deleteEndpoint(a.id), false, 'a second delete finds nothing')
    t.equal(await webhooks.getEndpoint(a.id), undefined)
    t.equal(await webhooks.listDeliveries(a.id, { limit: 5 }), undefined)
    t.same((await sql('SELECT endpoint_id FROM webhook_deliveries')).map((row) => row.endpoint_id), [b.id])
    t.same((await sql('SELECT plant_id FROM webhook_events')).map((row) => String(row.plant_id)), ['2'], 'the event b still has to receive stays')
    t.same(await webhooks.claim('sender', 10, 60000).then((got) => got.map((d) => d.endpointId)), [b.id], 'nothing is sent to a deleted endpoint')
    await store.create({ id: 3n, name: 'after' })
    t.same((await webhooks.listDeliveries(b.id, { limit: 5 }))?.length, 2)
    t.equal(await webhooks.deleteEndpoint('ep_none'), false)
  })

  t.test('deliveries page by page, newest first, each page after the last one of the previous', async (t) => {
    const { store, webhooks } = await open(t)
    const a = await webhooks.createEndpoint({ url: 'https://a.example/', secret: SECRET })
    t.same(await webhooks.listDeliveries(a.id, { limit: 5 }), [], 'none yet')
    // Some in one batch (one creation time), some apart.
    await Promise.all([1n, 2n, 3n].map((id) => store.create({ id, name: `p${id}` })))
    for (const id of [4n, 5n, 6n, 7n]) {
      await new Promise((resolve) => setTimeout(resolve, 3))
      await store.create({ id, name: `p${id}` })
    }
    const all = await webhooks.listDeliveries(a.id, { limit: 100 }) as Delivery[]
    t.equal(all.length, 7)
    for (let i = 1; i < all.length; i++) {
      const [newer, older] = [all[i - 1], all[i]]
      t.ok(newer.createdAt > older.createdAt || (newer.createdAt.getTime() === older.createdAt.getTime() && newer.id > older.id), `${i}: newest first`)
    }
    t.same(all.slice(0, 4).map((d) => d.plantId), [7n, 6n, 5n, 4n])

    const pages: Delivery[][] = []
    let before: { createdAt: Date, id: string } | undefined
    for (;;) {
      const page = await webhooks.listDeliveries(a.id, { limit: 2, before }) as Delivery[]
      if (page.length === 0) break
      pages.push(page)
      before = { createdAt: page[page.length - 1].createdAt, id: page[page.length - 1].id }
    }
    t.same(pages.map((page) => page.length), [2, 2, 2, 1])
    t.same(pages.flat(), all, 'the pages together are the whole list, once each')
    t.same(Object.keys(all[0]).sort(), ['attempts', 'createdAt', 'id', 'nextAttemptAt', 'plantId', 'status', 'type'], 'no lastStatus or lastError before an attempt')
  })

  t.test('rotate: the new secret signs first, the previous one beside it until the overlap ends', async (t) => {
    const { store, webhooks } = await open(t)
    const a = await webhooks.createEndpoint({ url: 'https://a.example/', secret: SECRET })
    await store.create({ id: 1n, name: 'one' })
    t.same((await webhooks.claim('s', 1, 1))[0].secrets, [SECRET])
    t.equal(await webhooks.rotateSecret(a.id, NEXT_SECRET, new Date(Date.now() + 60000)), true)
    await new Promise((resolve) => setTimeout(resolve, 5))
    t.same((await webhooks.claim('s', 1, 1))[0].secrets, [NEXT_SECRET, SECRET], 'both during the overlap')
    t.equal(await webhooks.rotateSecret(a.id, 'whsec_third', new Date(Date.now() - 1)), true)
    await new Promise((resolve) => setTimeout(resolve, 5))
    t.same((await webhooks.claim('s', 1, 1))[0].secrets, ['whsec_third'], 'the previous one alone once its overlap is over')
    t.equal(await webhooks.rotateSecret('ep_none', NEXT_SECRET, new Date()), false)
  })

  t.test('retry: due now whatever the status, under its own endpoint only; listeners hear of it', async (t) => {
    const { store, webhooks } = await open(t)
    const a = await webhooks.createEndpoint({ url: 'https://a.example/', secret: SECRET })
    const b = await webhooks.createEndpoint({ url: 'https://b.example/', secret: SECRET })
    await webhooks.updateEndpoint(b.id, { enabled: false })
    await store.create({ id: 1n, name: 'one' })
    const [claimed] = await webhooks.claim('s', 1, 60000)
    await webhooks.finish('s', claimed.id, { result: 'failed', status: 500, error: 'HTTP 500' })
    t.same(await webhooks.claim('s', 1, 60000), [], 'failed: not claimed')

    let heard = 0
    webhooks.onDeliveries(() => { heard++ })
    t.equal(await webhooks.retryDelivery(b.id, claimed.id), false, 'not under another endpoint')
    t.equal(await webhooks.retryDelivery(a.id, 'msg_none'), false)
    t.equal(heard, 0)
    t.equal(await webhooks.retryDelivery(a.id, claimed.id), true)
    t.equal(heard, 1)
    const [listed] = await webhooks.listDeliveries(a.id, { limit: 1 }) as Delivery[]
    t.same([listed.status, listed.attempts, listed.lastStatus, listed.lastError], ['pending', 1, 500, 'HTTP 500'], 'the last attempt stays on record')
    const [again] = await webhooks.claim('s', 1, 60000)
    t.same([again.id, again.attempts], [claimed.id, 1], 'the same webhook-id, one attempt made before')
    await webhooks.finish('s', again.id, { result: 'succeeded', status: 204 })
    t.equal(await webhooks.retryDelivery(a.id, claimed.id), true, 'a succeeded delivery can be sent again too')
    t.same((await webhooks.claim('s', 1, 60000)).map((d) => d.id), [claimed.id])
  })
})
