import { once } from 'node:events'
import { createServer, type ServerResponse } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { Webhook, WebhookVerificationError } from 'standardwebhooks'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config/index.js'
import { openStore, type PlantStore } from '../../src/store/index.js'
import type { Delivery } from '../../src/store/webhook-types.js'
import { makeSecret } from '../../src/webhooks/signing.js'
import { AUTH, postPlant, TOKEN } from '../helpers/build.js'
import { closedPort, startReceiver, type Received } from '../helpers/receiver.js'
import { forEachStore } from '../helpers/stores.js'
import { waitUntil } from '../helpers/webhooks.js'

// The service as the server builds it, end to end: plants over HTTP, the outbox, the
// sender, and receivers on 127.0.0.1. Endpoints are made through the store's port.

function verify (secret: string, request: Received): unknown {
  return new Webhook(secret).verify(request.body, request.headers as Record<string, string>, { jsonParse: false })
}

forEachStore(t, (t, _build, databaseUrl) => {
  async function service (t: Test, env: Record<string, string> = {}): Promise<{ app: FastifyInstance, store: PlantStore }> {
    const config = loadConfig({
      API_TOKENS: TOKEN,
      LOG_LEVEL: 'silent',
      DATABASE_URL: await databaseUrl(t),
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_RETRY_SCHEDULE: '50ms,100ms',
      WEBHOOK_TIMEOUT: '1000',
      ...env
    })
    const store = await openStore(config)
    const app = await buildApp(config, { store })
    t.teardown(() => app.close())
    await app.ready()
    return { app, store }
  }

  async function deliveries (store: PlantStore, endpoint: string): Promise<Delivery[]> {
    return await store.webhooks.listDeliveries(endpoint, { limit: 100 }) as Delivery[]
  }

  t.test('signed the Standard Webhooks way, before, during and after a rotation', async (t) => {
    const { app, store } = await service(t)
    const receiver = await startReceiver(t)
    const [first, second, third] = [makeSecret(), makeSecret(), makeSecret()]
    const endpoint = await store.webhooks.createEndpoint({ url: `${receiver.origin}/hooks`, secret: first })
    await postPlant(app, { id: 1, name: 'Monstera' })
    const [one] = await receiver.waitFor(1)
    t.equal(verify(first, one), undefined, 'verified with the secret')
    t.throws(() => verify(second, one), WebhookVerificationError, 'and with no other')
    t.equal(one.headers['webhook-id'], (await deliveries(store, endpoint.id))[0].id, 'webhook-id is the delivery id')

    await store.webhooks.rotateSecret(endpoint.id, second, new Date(Date.now() + 24 * 3600_000))
    await postPlant(app, { id: 2, name: 'Fern' })
    const [, two] = await receiver.waitFor(2)
    t.equal((two.headers['webhook-signature'] as string).split(' ').length, 2, 'two signatures during the overlap')
    t.equal(verify(second, two), undefined, 'the new secret verifies')
    t.equal(verify(first, two), undefined, 'the previous one still does')

    await store.webhooks.rotateSecret(endpoint.id, third, new Date(Date.now() - 1))
    await postPlant(app, { id: 3, name: 'Aloe' })
    const [,, three] = await receiver.waitFor(3)
    t.equal((three.headers['webhook-signature'] as string).split(' ').length, 1, 'one once the overlap is over')
    t.equal(verify(third, three), undefined)
    t.throws(() => verify(second, three), WebhookVerificationError)
  })

  t.test('the body is the stored NewPlant, byte for byte', async (t) => {
    const { app, store } = await service(t)
    const receiver = await startReceiver(t)
    await store.webhooks.createEndpoint({ url: receiver.origin, secret: makeSecret() })
    const bodies = [
      '{"id":9007199254740993,"name":"Above 2^53"}',
      '{"id":-9223372036854775808,"name":"Ficus 🌿 \\"lyrata\\"","tag":"indoor"}',
      '{"id":9223372036854775807,"name":"","tag":""}'
    ]
    for (const body of bodies) t.equal((await postPlant(app, body)).statusCode, 200)
    // Unknown properties are not stored, so not sent; the tag is absent when there is none.
    t.equal((await postPlant(app, '{"name":"Extra","extra":true,"id":7.0}')).statusCode, 200)
    const received = await receiver.waitFor(4)
    t.same(received.map((request) => request.body.toString('utf8')).sort(), [...bodies, '{"id":7,"name":"Extra"}'].sort())
    for (const request of received) t.equal(request.headers['content-type'], 'application/json')
  })

  t.test('one event per plant added: none for a replay, a conflict or a refused create; a new one after a delete', async (t) => {
    const { app, store } = await service(t)
    const receiver = await startReceiver(t)
    const endpoint = await store.webhooks.createEndpoint({ url: receiver.origin, secret: makeSecret() })
    const other = await startReceiver(t)
    await store.webhooks.createEndpoint({ url: other.origin, secret: makeSecret() })
    t.equal((await postPlant(app, { id: 5, name: 'Palm' })).statusCode, 200)
    t.equal((await postPlant(app, { id: 5, name: 'Palm' })).statusCode, 200, 'a replay')
    t.equal((await postPlant(app, { id: 5, name: 'Other' })).statusCode, 409)
    t.equal((await postPlant(app, { id: '6', name: 'Bad' })).statusCode, 400)
    t.equal((await app.inject({ method: 'DELETE', url: '/plants/5', headers: AUTH })).statusCode, 204)
    t.equal((await postPlant(app, { id: 5, name: 'Palm again' })).statusCode, 200, 'deleted, then added again')
    await receiver.waitFor(2)
    await other.waitFor(2)
    await sleep(300)
    t.same(receiver.received.map((request) => request.body.toString()), ['{"id":5,"name":"Palm"}', '{"id":5,"name":"Palm again"}'])
    t.equal(other.received.length, 2, 'the same events to every enabled endpoint')
    t.not(receiver.received[0].headers['webhook-id'], receiver.received[1].headers['webhook-id'], 'two events, two ids')
    t.equal((await deliveries(store, endpoint.id)).length, 2)
  })

  t.test('retried with the same webhook-id after a 500, a timeout and a 302; a refused connection too', async (t) => {
    const { app, store } = await service(t, { WEBHOOK_RETRY_SCHEDULE: '50ms,50ms,50ms,50ms', WEBHOOK_TIMEOUT: '300' })
    const answers = [
      (response: ServerResponse) => { response.writeHead(500).end() },
      () => {}, // no answer within WEBHOOK_TIMEOUT
      (response: ServerResponse) => { response.writeHead(302, { location: '/elsewhere' }).end() },
      (response: ServerResponse) => { response.writeHead(204).end() }
    ]
    const receiver = await startReceiver(t, (request, response) => { (answers[receiver.received.length - 1] ?? answers[3])(response) })
    const endpoint = await store.webhooks.createEndpoint({ url: `${receiver.origin}/in`, secret: makeSecret() })
    await postPlant(app, { id: 8, name: 'Persistent' })
    const requests = await receiver.waitFor(4)
    await waitUntil('succeeded', async () => (await deliveries(store, endpoint.id))[0]?.status === 'succeeded')
    t.same(new Set(requests.map((request) => request.headers['webhook-id'])), new Set([(await deliveries(store, endpoint.id))[0].id]), 'one webhook-id')
    t.same(requests.map((request) => request.url), ['/in', '/in', '/in', '/in'], 'the redirect was not followed')
    t.match((await deliveries(store, endpoint.id))[0], { attempts: 4, lastStatus: 204 })

    // Nothing listens on the port at first: the connection is refused, then a receiver comes up there.
    const port = await closedPort()
    const refused = await store.webhooks.createEndpoint({ url: `http://127.0.0.1:${port}/`, secret: makeSecret() })
    await store.webhooks.updateEndpoint(endpoint.id, { enabled: false })
    await postPlant(app, { id: 9, name: 'Waiting' })
    await waitUntil('refused once', async () => (await deliveries(store, refused.id))[0]?.attempts >= 1)
    const [delivery] = await deliveries(store, refused.id)
    t.match(delivery.lastError, /ECONNREFUSED/)
    const late = createServer((_, response) => { response.writeHead(200).end() })
    const ids: string[] = []
    late.on('request', (request) => ids.push(request.headers['webhook-id'] as string))
    late.listen(port, '127.0.0.1')
    await once(late, 'listening')
    t.teardown(() => late.close())
    await store.webhooks.retryDelivery(refused.id, delivery.id)
    await waitUntil('delivered', async () => (await deliveries(store, refused.id))[0]?.status === 'succeeded')
    // The schedule's own retry (50 ms) may reach the late receiver beside the manual one: each is an attempt of the same delivery.
    t.ok(ids.length >= 1 && ids.every((id) => id === delivery.id), 'the same webhook-id once it got through')
  })

  t.test('410 disables the endpoint and stops its deliveries', async (t) => {
    const { app, store } = await service(t, { WEBHOOK_RETRY_SCHEDULE: '2s' })
    const receiver = await startReceiver(t, (_, response) => { response.writeHead(503).end() })
    const endpoint = await store.webhooks.createEndpoint({ url: receiver.origin, secret: makeSecret() })
    await postPlant(app, { id: 1, name: 'Waits for a retry' })
    await receiver.waitFor(1)
    receiver.answer((_, response) => { response.writeHead(410).end() })
    await postPlant(app, { id: 2, name: 'Answered 410' })
    await receiver.waitFor(2)
    await waitUntil('disabled', async () => (await store.webhooks.getEndpoint(endpoint.id))?.enabled === false)
    const byPlant = new Map((await deliveries(store, endpoint.id)).map((d) => [d.plantId, d]))
    t.match(byPlant.get(2n), { status: 'failed', lastStatus: 410 })
    t.match(byPlant.get(1n), { status: 'failed' }, 'the pending one stopped too')
    await postPlant(app, { id: 3, name: 'After' })
    await sleep(2500)
    t.equal(receiver.received.length, 2, 'no attempt after the 410, no retry of the pending one')
    t.equal((await deliveries(store, endpoint.id)).length, 2, 'no delivery for a disabled endpoint')
  })

  t.test('failed after the last delay; then a manual retry makes one more attempt', async (t) => {
    const { app, store } = await service(t, { WEBHOOK_RETRY_SCHEDULE: '50ms' })
    const receiver = await startReceiver(t, (_, response) => { response.writeHead(500).end() })
    const endpoint = await store.webhooks.createEndpoint({ url: receiver.origin, secret: makeSecret() })
    await postPlant(app, { id: 1, name: 'Unlucky' })
    await waitUntil('failed', async () => (await deliveries(store, endpoint.id))[0]?.status === 'failed')
    t.match((await deliveries(store, endpoint.id))[0], { attempts: 2, lastStatus: 500 })
    await sleep(200)
    t.equal(receiver.received.length, 2, 'nothing more by itself')
    receiver.answer((_, response) => { response.writeHead(200).end() })
    const [delivery] = await deliveries(store, endpoint.id)
    t.equal(await store.webhooks.retryDelivery(endpoint.id, delivery.id), true)
    const [, , third] = await receiver.waitFor(3, 3000)
    t.equal(third.headers['webhook-id'], delivery.id)
    await waitUntil('succeeded', async () => (await deliveries(store, endpoint.id))[0]?.status === 'succeeded')
    t.match((await deliveries(store, endpoint.id))[0], { attempts: 3, lastStatus: 200 })
  })

  t.test('deleting an endpoint cancels its pending deliveries', async (t) => {
    const { app, store } = await service(t, { WEBHOOK_RETRY_SCHEDULE: '300ms,300ms,300ms' })
    const receiver = await startReceiver(t, (_, response) => { response.writeHead(500).end() })
    const endpoint = await store.webhooks.createEndpoint({ url: receiver.origin, secret: makeSecret() })
    await postPlant(app, { id: 1, name: 'Pending' })
    await receiver.waitFor(1)
    t.equal(await store.webhooks.deleteEndpoint(endpoint.id), true)
    await sleep(1200)
    t.equal(receiver.received.length, 1, 'no retry after the delete')
  })

  t.test('a receiver that never answers holds up no plant request', async (t) => {
    const { app, store } = await service(t, { WEBHOOK_TIMEOUT: '10000' })
    const receiver = await startReceiver(t, () => {})
    await store.webhooks.createEndpoint({ url: receiver.origin, secret: makeSecret() })
    const started = Date.now()
    for (let id = 1; id <= 40; id++) t.equal((await postPlant(app, { id, name: `plant ${id}` })).statusCode, 200)
    await receiver.waitFor(4)
    t.ok(Date.now() - started < 10_000, `40 plants created in ${Date.now() - started} ms, before any attempt could time out`)
    t.equal(receiver.received.length, 4, 'while the attempts in flight (the bound per endpoint) hang')
  })

  t.test('private targets refused at every attempt unless allowed, with no connection made', async (t) => {
    const { app, store } = await service(t, { WEBHOOK_ALLOW_PRIVATE: 'false', WEBHOOK_RETRY_SCHEDULE: '50ms' })
    const receiver = await startReceiver(t)
    // Registration refuses a literal loopback address; a name is only checked when dialled.
    const endpoint = await store.webhooks.createEndpoint({ url: `http://localhost:${receiver.port}/`, secret: makeSecret() })
    await postPlant(app, { id: 1, name: 'Never sent' })
    await waitUntil('failed', async () => (await deliveries(store, endpoint.id))[0]?.status === 'failed')
    t.match((await deliveries(store, endpoint.id))[0], { attempts: 2, lastError: 'refused: no public address' })
    t.equal(receiver.connections(), 0, 'the receiver saw no connection')
  })
})
