import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { SCOPES, type Scope } from '../../src/shared/scopes.js'
import { AUTH, assertError, getPlant, postPlant } from '../helpers/build.js'
import { bearer, INSUFFICIENT, scopedTokensFile } from '../helpers/scopes.js'
import { forEachStore, type Build } from '../helpers/stores.js'
import { waitUntil } from '../helpers/webhooks.js'

// Deliveries go to a closed port of this machine: nothing leaves it.
const HOOK = 'http://127.0.0.1:9/plants'

interface Operation { method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, success: number }

/** The app with API_TOKENS (TOKEN, every scope) and a tokens file of one token per scope. */
async function scopedApp (t: Test, build: Build, env: Record<string, string> = {}): Promise<FastifyInstance> {
  return await build(t, { API_TOKENS_FILE: scopedTokensFile(t), WEBHOOK_ALLOW_PRIVATE: 'true', ...env })
}

function send (app: FastifyInstance, { method, url, payload }: Operation, headers: Record<string, string>) {
  return app.inject({
    method,
    url,
    headers: payload === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    payload: payload === undefined ? undefined : typeof payload === 'string' ? payload : JSON.stringify(payload)
  })
}

function assertForbidden (t: Test, res: Awaited<ReturnType<typeof send>>, scope: Scope): void {
  assertError(t, res, 403, new RegExp(`^This token may not do this: the operation needs the scope ${scope}, which the token does not have\\.$`))
  t.equal(res.headers['www-authenticate'], INSUFFICIENT(scope), 'the challenge names the scope')
}

const subscribe = async (app: FastifyInstance): Promise<string> =>
  (await send(app, { method: 'POST', url: '/webhooks', payload: { url: HOOK }, success: 201 }, AUTH)).json().id

forEachStore(t, (t, build) => {
  t.test('every operation × scope: its own scope is served, any other is a 403 that names it', async (t) => {
    const app = await scopedApp(t, build)
    const endpoint = await subscribe(app)
    const doomed = await subscribe(app)
    t.equal((await postPlant(app, { id: 1, name: 'Fern' })).statusCode, 200)
    t.equal((await postPlant(app, { id: 3, name: 'Ivy' })).statusCode, 200)
    const listed = async (): Promise<Array<{ id: string }>> => (await send(app, { method: 'GET', url: `/webhooks/${endpoint}/deliveries`, success: 200 }, AUTH)).json()
    // The sender expands the creates' events into deliveries a moment after the commit.
    await waitUntil('a delivery is listed', async () => (await listed()).length > 0)
    const [delivery] = await listed()

    // CONTRACT.md, "Scopes": the operations each scope allows.
    const table: Array<[Scope, Operation]> = [
      ['plants:write', { method: 'POST', url: '/plants', payload: { id: 2, name: 'Moss' }, success: 200 }],
      ['plants:read', { method: 'GET', url: '/plants/1', success: 200 }],
      ['plants:read', { method: 'GET', url: '/plants', success: 200 }],
      ['plants:write', { method: 'PATCH', url: '/plants/1', payload: { tag: 'shade' }, success: 200 }],
      ['plants:write', { method: 'DELETE', url: '/plants/3', success: 204 }],
      ['webhooks', { method: 'POST', url: '/webhooks', payload: { url: HOOK }, success: 201 }],
      ['webhooks', { method: 'GET', url: '/webhooks', success: 200 }],
      ['webhooks', { method: 'GET', url: `/webhooks/${endpoint}`, success: 200 }],
      ['webhooks', { method: 'PATCH', url: `/webhooks/${endpoint}`, payload: { description: 'changed' }, success: 200 }],
      ['webhooks', { method: 'POST', url: `/webhooks/${endpoint}/rotate-secret`, success: 200 }],
      ['webhooks', { method: 'GET', url: `/webhooks/${endpoint}/deliveries`, success: 200 }],
      ['webhooks', { method: 'POST', url: `/webhooks/${endpoint}/deliveries/${delivery.id as string}/retry`, success: 202 }],
      ['webhooks', { method: 'DELETE', url: `/webhooks/${doomed}`, success: 204 }],
      ['metrics', { method: 'GET', url: '/metrics', success: 200 }]
    ]
    for (const [needed, operation] of table) {
      const name = `${operation.method} ${operation.url}`
      // The refusals first: had one done anything, the allowed call after it would show it (a 404, a 409).
      for (const scope of SCOPES.filter((scope) => scope !== needed)) {
        t.test(`${name} with a ${scope} token`, async (t) => assertForbidden(t, await send(app, operation, bearer(scope)), needed))
      }
      t.equal((await send(app, operation, bearer(needed))).statusCode, operation.success, `${name} with a ${needed} token: served`)
      t.equal((await send(app, operation, AUTH)).statusCode, operation.method === 'DELETE' ? 404 : operation.success, `${name} with every scope: served`)
    }
  })

  t.test('a refused create, change or delete changes nothing, and a refused create sends nothing', async (t) => {
    const app = await scopedApp(t, build)
    const endpoint = await subscribe(app)
    t.equal((await postPlant(app, { id: 5, name: 'Basil' })).statusCode, 200)
    for (const scope of ['plants:read', 'webhooks', 'metrics'] as const) {
      assertForbidden(t, await postPlant(app, { id: 6, name: 'Mint' }, bearer(scope)), 'plants:write')
      assertForbidden(t, await postPlant(app, { id: 5, name: 'Not Basil' }, bearer(scope)), 'plants:write')
      assertForbidden(t, await app.inject({ method: 'DELETE', url: '/plants/5', headers: bearer(scope) }), 'plants:write')
      assertForbidden(t, await send(app, { method: 'PATCH', url: '/plants/5', payload: { name: 'Not Basil' }, success: 200 }, bearer(scope)), 'plants:write')
    }
    assertError(t, await getPlant(app, 6, bearer('plants:read')), 404)
    t.equal((await getPlant(app, 5, bearer('plants:read'))).body, '{"name":"Basil"}', 'the plant stays as it was')
    const listed = async () => (await app.inject({ url: `/webhooks/${endpoint}/deliveries`, headers: bearer('webhooks') })).json()
    // The sender expands the create's event into its delivery a moment after the commit.
    await waitUntil('the delivery is listed', async () => (await listed()).length > 0)
    await new Promise((resolve) => setTimeout(resolve, 200))
    const deliveries = await listed()
    t.same(deliveries.map((delivery: { plantId: number }) => delivery.plantId), [5], 'one event: the plant added, none for the refused creates')
  })

  t.test('a refused POST /webhooks subscribes nothing', async (t) => {
    const app = await scopedApp(t, build)
    for (const scope of ['plants:read', 'plants:write', 'metrics'] as const) {
      assertForbidden(t, await send(app, { method: 'POST', url: '/webhooks', payload: { url: HOOK }, success: 201 }, bearer(scope)), 'webhooks')
    }
    t.same((await app.inject({ url: '/webhooks', headers: bearer('webhooks') })).json(), [], 'no endpoint')
    t.equal((await postPlant(app, { id: 7, name: 'Aloe' }, bearer('plants:write'))).statusCode, 200)
    t.same((await app.inject({ url: '/webhooks', headers: bearer('webhooks') })).json(), [], 'still none after a plant was added')
  })

  t.test('the scope is checked before the body is read: a bad body with the wrong scope is a 403', async (t) => {
    const app = await scopedApp(t, build, { BODY_LIMIT: '100' })
    const read = bearer('plants:read')
    for (const payload of ['{"id":', '{"id": "2", "name": 5}', 'x'.repeat(1000)]) {
      const res = await postPlant(app, payload, read)
      assertForbidden(t, res, 'plants:write')
      t.equal(res.headers.connection, 'close', 'the body is not read')
    }
    assertForbidden(t, await app.inject({ method: 'POST', url: '/plants', headers: { ...read, 'content-type': 'text/plain' }, payload: 'Fern' }), 'plants:write')
    assertForbidden(t, await send(app, { method: 'POST', url: '/webhooks', payload: '{"url":', success: 201 }, read), 'webhooks')
    assertForbidden(t, await send(app, { method: 'PATCH', url: '/webhooks/ep_none', payload: '{"enabled": "no"}', success: 200 }, bearer('plants:write')), 'webhooks')
    assertForbidden(t, await send(app, { method: 'PATCH', url: '/plants/1', payload: '{"name": 5', success: 200 }, read), 'plants:write')
    assertError(t, await postPlant(app, '{"id":', bearer('plants:write')), 400, undefined)
  })
})
