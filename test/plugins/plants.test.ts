import Fastify, { type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import fp from 'fastify-plugin'
import plants, { type PlantsStore } from '../../plugins/plants/index.js'
import { acceptJsonBodies } from '../../src/http/json-body.js'
import { PLANT_BODY_LIMIT } from '../../schemas/index.js'
import { sendError } from '../../src/http/errors.js'
import { openSqliteStore } from '../../src/store/sqlite/index.js'
import type { PlantStore } from '../../src/store/types.js'
import { assertError } from '../helpers/build.js'

function json (payload: unknown) {
  return { method: 'POST' as const, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(payload) }
}

async function host (t: Test, register: (app: ReturnType<typeof Fastify>, store: PlantStore) => Promise<void>) {
  const store = openSqliteStore({ path: ':memory:' })
  const app = Fastify()
  t.teardown(async () => { await app.close(); await store.close() })
  await register(app, store)
  await app.ready()
  return { app, store }
}

t.test('alone on a bare Fastify, under a prefix, with no auth', async (t) => {
  const { app } = await host(t, async (app, store) => {
    await app.register(plants, { store, prefix: '/v1' })
  })
  t.same((await app.inject({ ...json({ id: 1, name: 'Fern' }), url: '/v1/plants' })).json(), { name: 'Fern' })
  t.same((await app.inject('/v1/plants/1')).json(), { name: 'Fern' })
  const patch = { method: 'PATCH' as const, headers: { 'content-type': 'application/merge-patch+json' }, payload: '{"tag":"shade"}' }
  t.same((await app.inject({ ...patch, url: '/v1/plants/1' })).json(), { name: 'Fern', tag: 'shade' }, 'a merge patch, under the prefix')
  t.equal((await app.inject({ ...json({ id: 1, name: 'Fern' }), url: '/plants' })).statusCode, 404, 'nothing outside the prefix')
  t.equal((await app.inject({ ...patch, url: '/plants/1' })).statusCode, 404)
})

t.test('under /api, the next link carries the prefix and leads to the next page', async (t) => {
  const { app } = await host(t, async (app, store) => {
    await app.register(plants, { store, prefix: '/api' })
  })
  for (const id of [3, 1, 2]) t.equal((await app.inject({ ...json({ id, name: `p${id}`, tag: 'x' }), url: '/api/plants' })).statusCode, 200)
  const first = await app.inject('/api/plants?limit=2&tag=x')
  t.equal(first.body, '[{"id":1,"name":"p1","tag":"x"},{"id":2,"name":"p2","tag":"x"}]')
  const link = /^<(\/api\/plants\?limit=2&tag=x&cursor=[\w-]+)>; rel="next"$/.exec(first.headers.link as string)
  t.ok(link, `the link names the prefix: ${first.headers.link}`)
  const next = new URL((link as RegExpExecArray)[1], 'http://host/api/plants?limit=2&tag=x')
  const second = await app.inject(next.pathname + next.search)
  t.equal(second.body, '[{"id":3,"name":"p3","tag":"x"}]')
  t.equal(second.headers.link, undefined)
  t.equal((await app.inject({ method: 'DELETE', url: '/api/plants/3' })).statusCode, 204)
  t.equal((await app.inject({ method: 'DELETE', url: '/plants/3' })).statusCode, 404, 'nothing outside the prefix')
})

t.test('nothing it sets leaks onto the host', async (t) => {
  const { app } = await host(t, async (app, store) => {
    await app.register(plants, { store, prefix: '/v1' })
    app.post('/host', async (request: { body: unknown }) => ({ got: request.body }))
    app.get('/host/boom', async () => { throw Object.assign(new Error('host failure'), { statusCode: 418 }) })
  })
  const text = await app.inject({ method: 'POST', url: '/host', headers: { 'content-type': 'text/plain' }, payload: 'hi' })
  t.same(text.json(), { got: 'hi' }, "the host keeps Fastify's text/plain parser")
  const patch = await app.inject({ method: 'POST', url: '/host', headers: { 'content-type': 'application/merge-patch+json' }, payload: '{}' })
  t.equal(patch.statusCode, 415, 'nor does the host take merge patches, which only the plugin\'s PATCH route does')
  const big = await app.inject({ method: 'POST', url: '/host', headers: { 'content-type': 'application/json' }, payload: '{"n":12345678901234567890}' })
  t.equal(big.body, '{"got":{"n":12345678901234567000}}', "the host keeps Fastify's own JSON parser")
  const boom = await app.inject('/host/boom')
  t.same(Object.keys(boom.json()).sort(), ['code', 'error', 'message', 'statusCode'].filter((k) => k in boom.json()).sort())
  t.equal(boom.json().statusCode, 418, "the host keeps Fastify's error format")
  t.equal((await app.inject('/nowhere')).json().statusCode, 404, "the host keeps Fastify's 404 format")
  t.equal(app.getSchemas().Plant, undefined, 'the shared schemas stay in the plugin scope')
})

t.test("a host's own auth keeps its own replies; its thrown errors get the Error body", async (t) => {
  const { app } = await host(t, async (app, store) => {
    app.register(async (scope: FastifyInstance) => {
      scope.addHook('onRequest', async (request, reply) => {
        if (request.headers['x-key'] === undefined) return reply.code(401).send({ ok: false, reason: 'no key' })
        if (request.headers['x-key'] !== 'k') throw Object.assign(new Error('wrong key'), { statusCode: 403 })
      })
      await scope.register(plants, { store })
    }, { prefix: '/v2' })
  })
  const sent = await app.inject('/v2/plants/1')
  t.equal(sent.statusCode, 401)
  t.same(sent.json(), { ok: false, reason: 'no key' }, "the host's reply is not forced into the plugin's schemas")
  assertError(t, await app.inject({ url: '/v2/plants/1', headers: { 'x-key': 'x' } }), 403, /^wrong key$/)
  assertError(t, await app.inject({ url: '/v2/plants/1', headers: { 'x-key': 'k' } }), 404)
})

t.test('its own errors have the Error body, on its own routes', async (t) => {
  const { app } = await host(t, async (app, store) => { await app.register(plants, { store }) })
  assertError(t, await app.inject({ ...json({ id: '1', name: 'x' }), url: '/plants' }), 400, /^body\/id must be integer$/)
  assertError(t, await app.inject('/plants/x'), 400)
  assertError(t, await app.inject('/plants/9'), 404)
})

t.test('registered twice: two prefixes, two stores', async (t) => {
  const other = openSqliteStore({ path: ':memory:' })
  t.teardown(() => other.close())
  const { app } = await host(t, async (app, store) => {
    await app.register(plants, { store, prefix: '/a' })
    await app.register(plants, { store: other, prefix: '/b' })
  })
  for (const id of [1, 2]) {
    await app.inject({ ...json({ id, name: 'in a' }), url: '/a/plants' })
    await app.inject({ ...json({ id, name: 'in b' }), url: '/b/plants' })
  }
  t.same((await app.inject('/a/plants/1')).json(), { name: 'in a' })
  t.same((await app.inject('/b/plants/1')).json(), { name: 'in b' })
  t.match((await app.inject('/a/plants?limit=1')).headers.link, /^<\/a\/plants\?limit=1&cursor=/, 'each next link carries its own prefix')
  t.match((await app.inject('/b/plants?limit=1')).headers.link, /^<\/b\/plants\?limit=1&cursor=/)
  t.equal((await app.inject({ method: 'DELETE', url: '/a/plants/2' })).statusCode, 204)
  t.same((await app.inject('/b/plants/2')).json(), { name: 'in b' }, 'a delete under one prefix leaves the other')
})

t.test('a plugin as Fastify users expect: named, for Fastify 5, in a scope of its own', async (t) => {
  t.match((plants as unknown as Record<symbol, unknown>)[Symbol.for('plugin-meta')], { name: 'plant-store-plants', fastify: '5.x', encapsulate: true })
  const { app } = await host(t, async (app, store) => {
    await app.register(plants, { store, prefix: '/v1' })
    // A host's plugin can name it as a dependency.
    await app.register(fp(async () => {}, { name: 'needs-plants', dependencies: ['plant-store-plants'] }))
  })
  t.equal(app.getSchemas().Plant, undefined, 'its schemas stay in its scope')
  t.equal(app.hasContentTypeParser('application/merge-patch+json'), false, 'and so do its parsers')
  t.equal((await app.inject('/v1/plants/1')).statusCode, 404)
})

t.test('a store of the members the routes use, and no other, is enough', async (t) => {
  const full = openSqliteStore({ path: ':memory:' })
  t.teardown(() => full.close())
  const store: PlantsStore = {
    cursorKey: full.cursorKey,
    create: (plant, options) => full.create(plant, options),
    update: (id, change, options) => full.update(id, change, options),
    delete: (id, options) => full.delete(id, options),
    get: (id) => full.get(id),
    list: (query) => full.list(query)
  }
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(plants, { store, prefix: '/p' })
  for (const id of [1, 2]) t.equal((await app.inject({ ...json({ id, name: 'Fern' }), url: '/p/plants' })).statusCode, 200)
  const read = await app.inject('/p/plants/1')
  const patch = { method: 'PATCH' as const, url: '/p/plants/1', headers: { 'content-type': 'application/merge-patch+json', 'if-match': read.headers.etag as string }, payload: '{"tag":"shade"}' }
  t.same((await app.inject(patch)).json(), { name: 'Fern', tag: 'shade' })
  t.equal((await app.inject(patch)).statusCode, 412)
  t.match((await app.inject('/p/plants?limit=1')).headers.link, /cursor=/)
  t.equal((await app.inject({ method: 'DELETE', url: '/p/plants/1' })).statusCode, 204)
})

t.test('bodyLimit option', async (t) => {
  const { app } = await host(t, async (app, store) => { await app.register(plants, { store, bodyLimit: 40 }) })
  assertError(t, await app.inject({ ...json({ id: 1, name: 'x'.repeat(50) }), url: '/plants' }), 413, /40 bytes/)
})

t.test('a plant write reads no more than PLANT_BODY_LIMIT, whatever bodyLimit the host or the option allows', async (t) => {
  const { app } = await host(t, async (app, store) => { await app.register(plants, { store, bodyLimit: 2 ** 20 }) })
  const padded = (bytes: number) => ({ ...json({ id: 1, name: 'Fern', pad: 'x'.repeat(bytes - '{"id":1,"name":"Fern","pad":""}'.length) }), url: '/plants' })
  t.equal((await app.inject(padded(PLANT_BODY_LIMIT))).statusCode, 200, 'at the limit: read (an ignored property pads it)')
  assertError(t, await app.inject(padded(PLANT_BODY_LIMIT + 1)), 413, new RegExp(`${PLANT_BODY_LIMIT} bytes`))
})

t.test('a store failure is a 500 that carries no internals', async (t) => {
  const { app, store } = await host(t, async (app, store) => { await app.register(plants, { store }) })
  await store.close()
  for (const res of [await app.inject('/plants/1'), await app.inject({ ...json({ id: 1, name: 'x' }), url: '/plants' })]) {
    assertError(t, res, 500, /request id/)
    t.notMatch(res.body, /database|sqlite|SELECT|INSERT|\/|at /i)
  }
})

t.test('options are checked at registration', async (t) => {
  const partial = { create () {}, get () {}, check () {}, close () {} }
  const store = openSqliteStore({ path: ':memory:' })
  t.teardown(() => store.close())
  const keyless = (cursorKey: unknown) => Object.assign(Object.create(store), { cursorKey })
  const bad: unknown[] = [{}, { store: null }, { store: { create () {} } }, { store: partial }, { store, bodyLimit: 0 },
    { store: keyless(undefined) }, { store: keyless('a key in a string') }, { store: keyless(Buffer.alloc(15)) }]
  for (const options of bad) {
    const app = Fastify()
    await t.rejects(async () => { await app.register(plants, options as never).ready() }, /plants: options\./)
  }
})

t.test('its JSON parser lets a route without a body schema take an empty body', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  acceptJsonBodies(app)
  app.setErrorHandler(sendError)
  app.delete('/thing', async (request) => ({ body: request.body ?? 'none' }))
  app.post('/thing', { schema: { body: { type: 'object' } } }, async (request) => ({ body: request.body }))
  const empty = { url: '/thing', headers: { 'content-type': 'application/json' }, payload: '' }
  const res = await app.inject({ ...empty, method: 'DELETE' })
  t.equal(res.statusCode, 200, 'a DELETE labelled JSON with no body')
  t.same(res.json(), { body: 'none' })
  t.same((await app.inject({ ...empty, method: 'DELETE', payload: '{"a":1}' })).json(), { body: { a: 1 } })
  assertError(t, await app.inject({ ...empty, method: 'POST' }), 400, /^The request body is empty/)
})
