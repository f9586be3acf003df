import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { createClient, type PlantStoreClient, type PlantStoreError, type WebhookDelivery, type WebhookEndpoint } from '../../../src/client/index.js'
import { verifyWebhook } from '../../../src/client/verify-webhook.js'
import { bounded } from '../../helpers/bounded.js'
import { startService, TOKEN } from '../../helpers/service.js'

const ABOVE_DOUBLE = 2n ** 53n + 1n
const IDS = [-(2n ** 63n), 2n ** 63n - 1n, ABOVE_DOUBLE, 1n, 2n]

interface Received { headers: IncomingHttpHeaders, body: Buffer }

/** A webhook receiver on loopback that answers 204 and keeps what it was sent; `next` waits 30 s at most. */
async function receiver (t: Test): Promise<{ url: string, received: Received[], next: () => Promise<Received> }> {
  const received: Received[] = []
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    received.push({ headers: request.headers, body: Buffer.concat(chunks) })
    response.writeHead(204).end()
    server.emit('received')
  }).listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve) }))
  let seen = 0
  const next = async (): Promise<Received> => {
    const arrived = (async () => {
      while (received.length <= seen) await once(server, 'received')
    })()
    await bounded(arrived, 30_000, `delivery ${seen + 1} reaching the receiver`, () => `${received.length} had arrived`)
    return received[seen++]
  }
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received, next }
}

/** The real service, spawned on SQLite, allowed to send to the loopback receiver. */
async function target (t: Test): Promise<{ client: PlantStoreClient, addPlant: (id: bigint) => Promise<void> }> {
  const service = await startService(t, 'sqlite', { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '100ms' })
  const client = createClient({ baseUrl: service.url, token: TOKEN })
  return { client, addPlant: async (id) => { await client.create({ id, name: `plant ${id}` }) } }
}

t.test('the /webhooks operations', async (t) => {
  const { client, addPlant } = await target(t)
  const hook = await receiver(t)

  const endpoint = await client.webhooks.create({ url: hook.url, description: 'the test receiver' })
  t.match(endpoint, { url: hook.url, description: 'the test receiver', enabled: true, id: String, createdAt: String })
  t.match(endpoint.secret, /^whsec_[A-Za-z0-9+/]{43}=$/, 'the secret, this once')
  const { secret: _secret, ...shown } = endpoint
  t.strictSame(await client.webhooks.get(endpoint.id), shown, 'the endpoint, without its secret')
  const listed: WebhookEndpoint[] = []
  for await (const one of client.webhooks.list()) listed.push(one)
  t.same(listed.map((e) => e.id), [endpoint.id])
  t.notOk('secret' in listed[0], 'never the secret again')
  // More endpoints than a page: list walks them page after page, listPage gives one and the next cursor.
  const more = [endpoint.id]
  for (let i = 0; i < 4; i++) more.push((await client.webhooks.create({ url: `${hook.url}/more/${i}` })).id)
  const walked: string[] = []
  for await (const one of client.webhooks.list({ limit: 2 })) walked.push(one.id)
  t.same(walked.sort(), [...more].sort(), 'every endpoint, each once')
  const firstPage = await client.webhooks.listPage({ limit: 3 })
  t.equal(firstPage.items.length, 3)
  const lastPage = await client.webhooks.listPage({ limit: 3, cursor: firstPage.nextCursor })
  t.same([lastPage.items.length, lastPage.nextCursor], [2, undefined])
  for (const id of more.slice(1)) await client.webhooks.delete(id)

  for (const id of IDS) await addPlant(id)
  // The sender expands each create's event into its delivery a moment after the commit.
  while ((await client.webhooks.deliveriesPage(endpoint.id, { limit: 100 })).items.length < IDS.length) await new Promise((resolve) => setTimeout(resolve, 20))
  const all: WebhookDelivery[] = []
  for await (const delivery of client.webhooks.deliveries(endpoint.id, { limit: 2 })) all.push(delivery)
  t.strictSame(all.map((d) => d.plantId), [...IDS].reverse(), 'one delivery a plant, newest first, plant ids exact bigints')
  t.ok(all.every((d) => ['pending', 'succeeded', 'failed'].includes(d.status) && typeof d.attempts === 'number'))
  const first = await client.webhooks.deliveriesPage(endpoint.id, { limit: 2 })
  t.equal(first.items.length, 2)
  const second = await client.webhooks.deliveriesPage(endpoint.id, { limit: 2, cursor: first.nextCursor })
  t.strictSame(second.items.map((d) => d.plantId), [ABOVE_DOUBLE, 2n ** 63n - 1n])
  await client.webhooks.retryDelivery(endpoint.id, all[2].id)
  // An id the service never gave: not found, or not even of the shape its ids have.
  const unknown = await client.webhooks.retryDelivery(endpoint.id, 'no-such-delivery').catch((error: unknown) => error) as PlantStoreError
  t.ok(unknown.kind === 'not-found' || unknown.kind === 'bad-request', `retryDelivery of an unknown delivery: ${unknown.status}`)

  const disabled = await client.webhooks.update(endpoint.id, { enabled: false, description: 'paused' })
  t.match(disabled, { id: endpoint.id, enabled: false, description: 'paused' })
  const rotated = await client.webhooks.rotateSecret(endpoint.id)
  t.match(rotated.secret, /^whsec_/)
  t.not(rotated.secret, endpoint.secret)

  await client.webhooks.delete(endpoint.id)
  await t.rejects(client.webhooks.get(endpoint.id), { name: 'PlantStoreError', kind: 'not-found', status: 404 })
  await t.rejects(client.webhooks.delete(endpoint.id), { name: 'PlantStoreError', kind: 'not-found' }, 'a first-attempt 404 stays a 404')
  const strange = await client.webhooks.deliveriesPage('no/such id').catch((error: unknown) => error) as PlantStoreError
  t.ok(strange.kind === 'not-found' || strange.kind === 'bad-request', `deliveries of an unknown endpoint: ${strange.status}`)
})

t.test('verifyWebhook on deliveries from the real sender', async (t) => {
  const { client, addPlant } = await target(t)
  const hook = await receiver(t)
  const endpoint = await client.webhooks.create({ url: hook.url })
  await addPlant(ABOVE_DOUBLE)
  const delivery = await hook.next()
  t.strictSame(verifyWebhook(endpoint.secret, delivery.headers, delivery.body), { id: ABOVE_DOUBLE, name: `plant ${ABOVE_DOUBLE}` })
  t.equal(delivery.body.toString(), `{"id":${ABOVE_DOUBLE},"name":"plant ${ABOVE_DOUBLE}"}`, 'the exact stored NewPlant')

  const { secret } = await client.webhooks.rotateSecret(endpoint.id)
  await addPlant(2n ** 63n - 1n)
  const rotated = await hook.next()
  for (const key of [secret, endpoint.secret]) {
    t.strictSame(verifyWebhook(key, rotated.headers, rotated.body), { id: 2n ** 63n - 1n, name: `plant ${2n ** 63n - 1n}` }, 'both secrets sign for 24 h')
  }
})
