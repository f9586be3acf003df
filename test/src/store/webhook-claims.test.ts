import t from 'tap'
import { STOPPED } from '../../../src/store/webhook-common.js'
import type { ClaimedDelivery, Delivery } from '../../../src/store/webhook-types.js'
import { expandingStore, forEachStore, openTestStore, rawSql } from '../../helpers/stores.js'

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

forEachStore(t, (t, _build, databaseUrl) => {
  async function open (t: Parameters<typeof databaseUrl>[0]) {
    const url = await databaseUrl(t)
    const store = expandingStore(await openTestStore(t, url))
    const a = await store.webhooks.createEndpoint({ url: 'https://a.example/hook', secret: SECRET })
    return { store, webhooks: store.webhooks, a, sql: await rawSql(t, url) }
  }

  async function only (webhooks: Awaited<ReturnType<typeof open>>['webhooks'], endpoint: string): Promise<Delivery> {
    return (await webhooks.listDeliveries(endpoint, { limit: 1 }) as Delivery[])[0]
  }

  t.test('claim: due deliveries of enabled endpoints, oldest first, up to the limit, each leased to one owner', async (t) => {
    const { store, webhooks, a } = await open(t)
    for (const id of [1n, 2n, 3n]) await store.create({ id, name: `p${id}`, tag: id === 2n ? 'two' : undefined })
    // The oldest ones, in no particular order.
    const first = (await webhooks.claim('one', 2, 60000)).sort((x, y) => x.body < y.body ? -1 : 1)
    t.same(first.map((d) => d.body), ['{"id":1,"name":"p1"}', '{"id":2,"name":"p2","tag":"two"}'])
    t.same(first.map((d) => ({ ...d, id: undefined })), [1, 2].map((n) => ({
      id: undefined, endpointId: a.id, url: 'https://a.example/hook', secrets: [SECRET], body: first[n - 1].body, attempts: 0
    })))
    const rest = await webhooks.claim('two', 10, 60000)
    t.same(rest.map((d) => d.body), ['{"id":3,"name":"p3"}'], 'a leased delivery is not claimed again')
    t.same(await webhooks.claim('three', 10, 60000), [])
  })

  t.test('a lease that lapses lets another owner take the delivery over; the first owner can no longer finish it', async (t) => {
    const { store, webhooks, a } = await open(t)
    await store.create({ id: 1n, name: 'p' })
    const [mine] = await webhooks.claim('crashed', 1, 300)
    t.same(await webhooks.claim('other', 1, 60000), [], 'not while the lease holds')
    await sleep(350)
    const [taken] = await webhooks.claim('other', 1, 60000)
    t.equal(taken.id, mine.id, 'the same webhook-id')
    await webhooks.finish('crashed', mine.id, { result: 'succeeded', status: 200 })
    t.equal((await only(webhooks, a.id)).status, 'pending', 'the late finish of the former owner is ignored')
    await webhooks.finish('other', taken.id, { result: 'succeeded', status: 200 })
    t.equal((await only(webhooks, a.id)).status, 'succeeded')
  })

  t.test('finish: succeeded, retry, failed', async (t) => {
    const { store, webhooks, a } = await open(t)
    await store.create({ id: 1n, name: 'p' })

    let [claimed] = await webhooks.claim('s', 1, 60000)
    const at = new Date(Date.now() + 300)
    await webhooks.finish('s', claimed.id, { result: 'retry', at, status: 503, error: 'HTTP 503' })
    let listed = await only(webhooks, a.id)
    t.same([listed.status, listed.attempts, listed.lastStatus, listed.lastError, listed.nextAttemptAt], ['pending', 1, 503, 'HTTP 503', at])
    t.same(await webhooks.claim('s', 1, 60000), [], 'not before its time')
    await sleep(350)
    ;[claimed] = await webhooks.claim('s', 1, 60000)
    t.equal(claimed.attempts, 1, 'due again at its time')

    await webhooks.finish('s', claimed.id, { result: 'retry', at: new Date(), error: 'connection refused' })
    listed = await only(webhooks, a.id)
    t.same([listed.attempts, listed.lastStatus, listed.lastError], [2, undefined, 'connection refused'], 'no status without a response')
    ;[claimed] = await webhooks.claim('s', 1, 60000)
    await webhooks.finish('s', claimed.id, { result: 'failed', error: 'timed out after 15000 ms' })
    listed = await only(webhooks, a.id)
    t.same([listed.status, listed.attempts, listed.lastStatus, listed.lastError, listed.nextAttemptAt], ['failed', 3, undefined, 'timed out after 15000 ms', undefined])
    t.same(await webhooks.claim('s', 1, 60000), [], 'failed: never claimed again')

    await webhooks.retryDelivery(a.id, claimed.id)
    ;[claimed] = await webhooks.claim('s', 1, 60000)
    await webhooks.finish('s', claimed.id, { result: 'succeeded', status: 204 })
    listed = await only(webhooks, a.id)
    t.same([listed.status, listed.attempts, listed.lastStatus, listed.lastError, listed.nextAttemptAt], ['succeeded', 4, 204, undefined, undefined])
    t.same(await webhooks.claim('s', 1, 60000), [])
  })

  t.test('gone: the endpoint is disabled and its pending deliveries stop; other endpoints go on', async (t) => {
    const { store, webhooks, a } = await open(t)
    const b = await webhooks.createEndpoint({ url: 'https://b.example/', secret: SECRET })
    await store.create({ id: 1n, name: 'p1' })
    await store.create({ id: 2n, name: 'p2' })
    const [first] = (await webhooks.claim('s', 10, 60000)).filter((d) => d.endpointId === a.id)
    await webhooks.finish('s', first.id, { result: 'gone', status: 410 })
    t.equal((await webhooks.getEndpoint(a.id))?.enabled, false)
    const listed = await webhooks.listDeliveries(a.id, { limit: 5 }) as Delivery[]
    const gone = listed.find((d) => d.id === first.id) as Delivery
    const other = listed.find((d) => d.id !== first.id) as Delivery
    t.same([gone.status, gone.attempts, gone.lastStatus], ['failed', 1, 410])
    t.match(gone.lastError, /410/)
    t.same([other.status, other.attempts, other.lastError], ['failed', 0, STOPPED.gone])
    t.same((await webhooks.listDeliveries(b.id, { limit: 5 }))?.map((d) => d.status), ['pending', 'pending'])
    await store.create({ id: 3n, name: 'p3' })
    t.equal((await webhooks.listDeliveries(a.id, { limit: 5 }))?.length, 2, 'a disabled endpoint gets no new delivery')
    t.equal((await webhooks.listDeliveries(b.id, { limit: 5 }))?.length, 3)
  })

  t.test('a stopped delivery ignores the outcome of its attempt in flight', async (t) => {
    const { store, webhooks, a } = await open(t)
    await store.create({ id: 1n, name: 'p' })
    const [claimed] = await webhooks.claim('s', 1, 60000)
    await webhooks.updateEndpoint(a.id, { enabled: false })
    await webhooks.finish('s', claimed.id, { result: 'retry', at: new Date() })
    await webhooks.finish('s', claimed.id, { result: 'gone', status: 410 })
    t.same([(await only(webhooks, a.id)).status, (await only(webhooks, a.id)).lastError], ['failed', STOPPED.disabled])
    await webhooks.deleteEndpoint(a.id)
    await t.resolves(webhooks.finish('s', claimed.id, { result: 'gone', status: 410 }), 'nor does a delivery deleted with its endpoint')
  })

  t.test('a due delivery of a disabled endpoint waits until the endpoint is enabled', async (t) => {
    const { store, webhooks, a } = await open(t)
    await store.create({ id: 1n, name: 'p' })
    await webhooks.updateEndpoint(a.id, { enabled: false })
    const stopped = await only(webhooks, a.id)
    t.equal(await webhooks.retryDelivery(a.id, stopped.id), true)
    t.same(await webhooks.claim('s', 5, 60000), [], 'not sent while disabled')
    await webhooks.updateEndpoint(a.id, { enabled: true })
    t.same((await webhooks.claim('s', 5, 60000)).map((d) => d.id), [stopped.id])
  })

  t.test('release: an owner\'s leases end and its deliveries are due at once; other owners keep theirs', async (t) => {
    const { store, webhooks } = await open(t)
    for (const id of [1n, 2n, 3n]) await store.create({ id, name: `p${id}` })
    const mine = await webhooks.claim('leaving', 2, 60000)
    const theirs = await webhooks.claim('staying', 1, 60000)
    await webhooks.release('leaving')
    t.same((await webhooks.claim('next', 10, 60000)).map((d) => d.id).sort(), mine.map((d) => d.id).sort())
    await webhooks.finish('staying', theirs[0].id, { result: 'succeeded', status: 200 })
    await webhooks.finish('leaving', mine[0].id, { result: 'succeeded', status: 200 })
    const statuses = (await webhooks.listDeliveries((await webhooks.listEndpoints())[0].id, { limit: 5 }))?.map((d) => d.status).sort()
    t.same(statuses, ['pending', 'pending', 'succeeded'], 'a released owner can no longer finish')
  })

  t.test('prune: finished deliveries older than the cut, then the events left without deliveries', async (t) => {
    const { store, webhooks, a, sql } = await open(t)
    const b = await webhooks.createEndpoint({ url: 'https://b.example/', secret: SECRET })
    // 1200 plants (more than one chunk), each with a delivery to a and to b.
    for (let i = 0; i < 1200; i += 300) {
      await Promise.all(Array.from({ length: 300 }, (_, j) => store.create({ id: BigInt(i + j), name: `p${i + j}` })))
    }
    // Every delivery to a succeeds; to b, plant 0 succeeds, plants 1 to 1099 fail before the cut
    // and plants 1100 to 1199 fail after it (held until then).
    const held: ClaimedDelivery[] = []
    for (let claimed = await webhooks.claim('s', 500, 60000); claimed.length > 0; claimed = await webhooks.claim('s', 500, 60000)) {
      await Promise.all(claimed.map((d) => {
        if (d.endpointId === a.id || d.body === '{"id":0,"name":"p0"}') return webhooks.finish('s', d.id, { result: 'succeeded', status: 200 })
        if (Number(JSON.parse(d.body).id) >= 1100) { held.push(d); return undefined }
        return webhooks.finish('s', d.id, { result: 'failed', status: 500 })
      }))
    }
    t.equal(held.length, 100)
    await sleep(5)
    const cut = new Date()
    await sleep(5)
    await Promise.all(held.map((d) => webhooks.finish('s', d.id, { result: 'failed', status: 500 })))
    await store.create({ id: 5000n, name: 'after the cut' })
    const [late] = await webhooks.claim('s', 1, 60000)
    await webhooks.finish('s', late.id, { result: 'succeeded', status: 200 })

    t.equal(await webhooks.prune(cut), 1200 + 1 + 1099, 'the succeeded and failed ones finished before the cut')
    const events = await sql('SELECT plant_id FROM webhook_events ORDER BY plant_id')
    t.same(events.map((row) => Number(row.plant_id)), [...Array.from({ length: 100 }, (_, i) => 1100 + i), 5000],
      'events kept while b still has a delivery of them')
    t.notOk(events.some((row) => String(row.plant_id) === '0'), 'the event whose deliveries all went is gone')
    t.equal((await webhooks.listDeliveries(a.id, { limit: 100 }))?.length, 1, 'the delivery after the cut stays')
    const bs = await webhooks.listDeliveries(b.id, { limit: 200 }) ?? []
    t.equal(bs.filter((d) => d.status === 'failed').length, 100, 'failed ones finished after the cut stay, for a manual retry')
    t.equal(bs.length, 101, 'and the pending one')
    const pending = await webhooks.claim('s', 1, 60000)
    t.same(pending.map((d) => d.body), ['{"id":5000,"name":"after the cut"}'], 'pending ones stay')
    t.equal(await webhooks.prune(cut), 0, 'nothing more to prune')
  })
})
