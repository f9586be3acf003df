import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { assertError, AUTH, postPlant } from '../helpers/build.js'
import { startReceiver, type Received } from '../helpers/receiver.js'
import { forEachStore } from '../helpers/stores.js'
import { waitUntil } from '../helpers/webhooks.js'

// What a subscriber does, through the API only: subscribe, verify, rotate, see a failure, retry, leave.

function call (app: FastifyInstance, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) {
  return app.inject({ method, url, headers: { ...AUTH, 'content-type': 'application/json' }, payload: payload === undefined ? undefined : JSON.stringify(payload) })
}

function verify (secret: string, request: Received): void {
  new Webhook(secret).verify(request.body, request.headers as Record<string, string>, { jsonParse: false })
}

forEachStore(t, (t, build) => {
  t.test('a literal private address is refused at registration unless allowed, and nothing is dialled', async (t) => {
    const receiver = await startReceiver(t)
    const app = await build(t)
    assertError(t, await call(app, 'POST', '/webhooks', { url: `${receiver.origin}/hook` }), 400,
      /^body\/url must not name a loopback address \(127\.0\.0\.1\): webhooks go to public addresses unless the service runs with WEBHOOK_ALLOW_PRIVATE=true$/)
    assertError(t, await call(app, 'POST', '/webhooks', { url: 'http://169.254.169.254/latest/meta-data/' }), 400, /the cloud metadata address/)
    t.equal((await call(app, 'POST', '/webhooks', { url: `http://localhost:${receiver.port}/hook` })).statusCode, 201, 'a name is checked when dialled')
    t.equal(receiver.connections(), 0, 'registration connects to nothing')
  })

  t.test('subscribe, verify, rotate, see a failure, retry it, unsubscribe', async (t) => {
    let status = 204
    const receiver = await startReceiver(t, (_, response) => { response.writeHead(status).end() })
    const app = await build(t, { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '50ms' })
    const created = await call(app, 'POST', '/webhooks', { url: `${receiver.origin}/hook`, description: 'orders' })
    t.equal(created.statusCode, 201)
    const { id, secret } = created.json() as { id: string, secret: string }
    t.equal(receiver.connections(), 0)

    await postPlant(app, { id: 1, name: 'Monstera' })
    const [first] = await receiver.waitFor(1)
    verify(secret, first)

    const rotated = await call(app, 'POST', `/webhooks/${id}/rotate-secret`)
    t.equal(rotated.statusCode, 200)
    const { secret: next } = rotated.json() as { secret: string }
    await postPlant(app, { id: 2, name: 'Fern' })
    const [, second] = await receiver.waitFor(2)
    verify(next, second)
    verify(secret, second)

    status = 500
    await postPlant(app, { id: 3, name: 'Aloe' })
    const page = async () => (await call(app, 'GET', `/webhooks/${id}/deliveries`)).json() as Array<{ id: string, plantId: number, status: string, attempts: number, lastStatus?: number }>
    await waitUntil('failed', async () => (await page()).find((d) => d.plantId === 3)?.status === 'failed')
    const failed = (await page()).find((d) => d.plantId === 3) as { id: string }
    t.match(failed, { status: 'failed', attempts: 2, lastStatus: 500 })

    status = 200
    t.equal((await call(app, 'POST', `/webhooks/${id}/deliveries/${failed.id}/retry`)).statusCode, 202)
    await waitUntil('retried', async () => (await page()).find((d) => d.plantId === 3)?.status === 'succeeded')
    t.equal(receiver.received.at(-1)?.headers['webhook-id'], failed.id, 'the same webhook-id')
    t.same((await page()).map((d) => d.status), ['succeeded', 'succeeded', 'succeeded'])

    t.equal((await call(app, 'DELETE', `/webhooks/${id}`)).statusCode, 204)
    const before = receiver.received.length
    await postPlant(app, { id: 4, name: 'Palm' })
    await sleep(300)
    t.equal(receiver.received.length, before, 'nothing for an endpoint that is gone')
  })
})
