import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { DISABLED, STOPPED } from '../../../src/store/webhook-common.js'
import type { WebhookStore } from '../../../src/store/webhook-types.js'
import { expandAll, forEachStore, openTestStore } from '../../helpers/stores.js'

// No endpoint grows the store without bound: failed deliveries are pruned like succeeded ones,
// and an endpoint whose every attempt fails for long enough is disabled.
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
const FAILED = { result: 'failed', status: 500, error: 'HTTP 500' } as const
const RETRY = (): { result: 'retry', at: Date, status: number } => ({ result: 'retry', at: new Date(Date.now() + 60_000), status: 500 })

async function statuses (webhooks: WebhookStore, endpoint: string): Promise<string[]> {
  return ((await webhooks.listDeliveries(endpoint, { limit: 100 })) ?? []).map((d) => d.status).sort()
}

forEachStore(t, (t, _build, databaseUrl) => {
  t.test('finished deliveries, failed ones too, are pruned once older than the retention, counted from when they finished', async (t) => {
    const store = await openTestStore(t, await databaseUrl(t))
    const { webhooks } = store
    const endpoint = await webhooks.createEndpoint({ url: 'https://a.example/', secret: SECRET })
    for (let id = 1n; id <= 3n; id++) await store.create({ id, name: `p${id}` })
    await expandAll(store)
    const [failed, succeeded, pending] = await webhooks.claim('o', 3, 60_000)
    await webhooks.finish('o', failed.id, FAILED)
    await webhooks.finish('o', succeeded.id, { result: 'succeeded', status: 204 })
    await webhooks.finish('o', pending.id, RETRY())
    t.equal(await webhooks.prune(new Date(Date.now() - 60_000)), 0, 'none finished before the cut')
    await sleep(20)
    t.equal(await webhooks.prune(new Date()), 2, 'the failed and the succeeded one')
    t.same(await statuses(webhooks, endpoint.id), ['pending'], 'the pending one stays')
  })

  t.test('an endpoint whose every attempt fails since a time is disabled, says so, and its pending deliveries stop', async (t) => {
    const store = await openTestStore(t, await databaseUrl(t))
    const { webhooks } = store
    const failing = await webhooks.createEndpoint({ url: 'https://failing.example/', secret: SECRET })
    const recovered = await webhooks.createEndpoint({ url: 'https://recovered.example/', secret: SECRET })
    for (let id = 1n; id <= 2n; id++) await store.create({ id, name: `p${id}` })
    await expandAll(store)
    const claimed = await webhooks.claim('o', 4, 60_000)
    const of = (endpoint: string) => claimed.filter((d) => d.endpointId === endpoint)
    const firstFailure = Date.now()
    await webhooks.finish('o', of(failing.id)[0].id, RETRY())
    await webhooks.finish('o', of(recovered.id)[0].id, RETRY())
    await sleep(50)
    // The recovered one succeeds once: its failures since then count from the next one.
    await webhooks.finish('o', of(recovered.id)[1].id, { result: 'succeeded', status: 200 })
    await webhooks.finish('o', of(failing.id)[1].id, RETRY())
    t.equal(await webhooks.disableFailing(new Date(firstFailure - 1000)), 0, 'not failing for long enough yet')
    t.equal(await webhooks.disableFailing(new Date()), 1, 'the one that never succeeded')
    const endpoint = await webhooks.getEndpoint(failing.id)
    t.match(endpoint, { enabled: false, disabledReason: DISABLED.failing })
    t.ok(endpoint?.disabledAt instanceof Date && Math.abs(endpoint.disabledAt.getTime() - Date.now()) < 5000, 'when')
    t.match(await webhooks.getEndpoint(recovered.id), { enabled: true, disabledAt: undefined, disabledReason: undefined })
    const listed = (await webhooks.listDeliveries(failing.id, { limit: 10 })) ?? []
    t.same(listed.map((d) => [d.status, d.lastError]), [['failed', STOPPED.disabled], ['failed', STOPPED.disabled]], 'its pending deliveries are cancelled')
    await store.create({ id: 5n, name: 'after' })
    await expandAll(store)
    t.equal(((await webhooks.listDeliveries(failing.id, { limit: 10 })) ?? []).length, 2, 'and it gets no new ones')

    const enabled = await webhooks.updateEndpoint(failing.id, { enabled: true })
    t.match(enabled, { enabled: true, disabledAt: undefined, disabledReason: undefined }, 'enabled again: the reason goes')
    t.equal(await webhooks.disableFailing(new Date()), 0, 'and its failures before count no more')
  })

  t.test('a 410 says why on the endpoint', async (t) => {
    const store = await openTestStore(t, await databaseUrl(t))
    const { webhooks } = store
    const gone = await webhooks.createEndpoint({ url: 'https://gone.example/', secret: SECRET })
    await store.create({ id: 1n, name: 'p1' })
    await expandAll(store)
    const [delivery] = await webhooks.claim('o', 1, 60_000)
    await webhooks.finish('o', delivery.id, { result: 'gone', status: 410 })
    t.match(await webhooks.getEndpoint(gone.id), { enabled: false, disabledReason: DISABLED.gone })
  })
})
