import { once } from 'node:events'
import { createServer } from 'node:net'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { AUTH, assertError } from '../helpers/build.js'
import { list, walk } from '../helpers/list.js'
import { forEachStore } from '../helpers/stores.js'

// No test here adds a plant: an endpoint outside 127.0.0.1 must never get a delivery attempt.
const JSON_AUTH = { ...AUTH, 'content-type': 'application/json' }
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/

function post (app: FastifyInstance, url: string, payload?: unknown) {
  return app.inject({ method: 'POST', url, headers: payload === undefined ? AUTH : JSON_AUTH, payload: typeof payload === 'string' ? payload : JSON.stringify(payload) })
}

function patch (app: FastifyInstance, url: string, payload: unknown) {
  return app.inject({ method: 'PATCH', url, headers: JSON_AUTH, payload: JSON.stringify(payload) })
}

forEachStore(t, (t, build) => {
  t.test('POST /webhooks: 201 with the endpoint and its secret, shown this once', async (t) => {
    const app = await build(t)
    const before = Date.now()
    const res = await post(app, '/webhooks', { url: 'https://hooks.example.com/plants', description: 'Inventory', unknown: true })
    t.equal(res.statusCode, 201)
    t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
    const created = res.json()
    t.same(Object.keys(created).sort(), ['createdAt', 'description', 'enabled', 'id', 'secret', 'url'], 'no other key')
    t.match(created, { url: 'https://hooks.example.com/plants', description: 'Inventory', enabled: true })
    t.match(created.id, /^ep_[0-9a-f]{32}$/)
    t.match(created.secret, SECRET)
    t.equal(Buffer.from(created.secret.slice(6), 'base64').length, 32, '32 random bytes')
    t.ok(Date.parse(created.createdAt) >= before - 5, 'createdAt is an RFC 3339 time')

    const other = (await post(app, '/webhooks', { url: 'http://hooks.example.com/' })).json()
    t.not(other.secret, created.secret)
    t.same(Object.keys(other).sort(), ['createdAt', 'enabled', 'id', 'secret', 'url'], 'no description key when none')

    const { secret: _secret, ...shown } = created
    t.same((await app.inject({ url: `/webhooks/${created.id}`, headers: AUTH })).json(), shown, 'GET: never the secret')
    const { secret: _other, ...otherShown } = other
    t.same((await app.inject({ url: '/webhooks', headers: AUTH })).json(), [shown, otherShown], 'the list: oldest first, no secrets')
  })

  t.test('the URL rules: absolute http or https, no user info, at most 2048 characters, no literal private address', async (t) => {
    const app = await build(t)
    const refused: Array<[string, RegExp]> = [
      ['/relative/path', /^body\/url must be an absolute http or https URL/],
      ['ftp://files.example.com/', /^body\/url must be an absolute http or https URL/],
      ['https://user:pass@hooks.example.com/', /^body\/url must not contain user info/],
      [`https://hooks.example.com/${'a'.repeat(2049 - 'https://hooks.example.com/'.length)}`, /^body\/url must /],
      ['http://127.0.0.1:8080/', /^body\/url must not name .*127\.0\.0\.1.*WEBHOOK_ALLOW_PRIVATE=true/],
      ['http://[::1]/', /^body\/url must not name/],
      ['http://10.1.2.3/', /^body\/url must not name/],
      ['http://192.168.0.10/', /^body\/url must not name/],
      ['http://169.254.169.254/latest/meta-data/', /^body\/url must not name/],
      ['http://224.0.0.1/', /^body\/url must not name/],
      ['http://0.0.0.0/', /^body\/url must not name/],
      ['http://2130706433/', /^body\/url must not name/]
    ]
    for (const [url, message] of refused) assertError(t, await post(app, '/webhooks', { url }), 400, message)
    const longest = `https://hooks.example.com/${'a'.repeat(2048 - 'https://hooks.example.com/'.length)}`
    t.equal((await post(app, '/webhooks', { url: longest })).statusCode, 201, '2048 characters')
    t.equal((await post(app, '/webhooks', { url: 'http://localhost:8080/hooks' })).statusCode, 201, 'a host name is checked at each attempt, not here')
    t.same((await app.inject({ url: '/webhooks', headers: AUTH })).json().length, 2, 'nothing refused was stored')
  })

  t.test('WEBHOOK_ALLOW_PRIVATE=true accepts a private address', async (t) => {
    const app = await build(t, { WEBHOOK_ALLOW_PRIVATE: 'true' })
    for (const url of ['http://127.0.0.1:8080/', 'http://10.1.2.3/', 'http://[::1]:9000/x']) {
      t.equal((await post(app, '/webhooks', { url })).statusCode, 201, url)
    }
  })

  t.test('registration never connects to the URL', async (t) => {
    const app = await build(t, { WEBHOOK_ALLOW_PRIVATE: 'true' })
    const server = createServer((socket) => socket.destroy())
    let connections = 0
    server.on('connection', () => { connections++ })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    t.teardown(() => server.close())
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`
    const created = (await post(app, '/webhooks', { url })).json()
    await patch(app, `/webhooks/${created.id}`, { url: `${url}/v2` })
    await post(app, `/webhooks/${created.id}/rotate-secret`)
    await new Promise((resolve) => setTimeout(resolve, 300))
    t.equal(connections, 0)
  })

  t.test('bodies: the schema, strict JSON, and the media type', async (t) => {
    const app = await build(t)
    assertError(t, await post(app, '/webhooks', {}), 400, /^body must have required property 'url'/)
    assertError(t, await post(app, '/webhooks', { url: 5 }), 400, /^body\/url must be string/)
    assertError(t, await post(app, '/webhooks', { url: 'https://a.example/', description: null }), 400, /^body\/description must be string/)
    assertError(t, await post(app, '/webhooks', { url: 'https://a.example/', description: 'nul \u0000' }), 400, /^body\/description must not contain U\+0000/)
    assertError(t, await post(app, '/webhooks', '{"url": '), 400, /JSON/)
    assertError(t, await app.inject({ method: 'POST', url: '/webhooks', headers: { ...AUTH, 'content-type': 'text/plain' }, payload: 'https://a.example/' }), 415)
    const created = (await post(app, '/webhooks', { url: 'https://a.example/' })).json()
    assertError(t, await patch(app, `/webhooks/${created.id}`, { enabled: 'false' }), 400, /^body\/enabled must be boolean/)
  })

  t.test('PATCH: changes the fields given, the URL by the same rules', async (t) => {
    const app = await build(t)
    const created = (await post(app, '/webhooks', { url: 'https://a.example/' })).json()
    const { secret: _secret, ...endpoint } = created
    let res = await patch(app, `/webhooks/${created.id}`, { description: 'now described' })
    t.equal(res.statusCode, 200)
    t.same(res.json(), { ...endpoint, description: 'now described' })
    res = await patch(app, `/webhooks/${created.id}`, { url: 'https://b.example/v2', enabled: false })
    t.same(res.json(), { ...endpoint, url: 'https://b.example/v2', description: 'now described', enabled: false })
    t.same((await patch(app, `/webhooks/${created.id}`, {})).json(), res.json(), 'an empty patch changes nothing')
    assertError(t, await patch(app, `/webhooks/${created.id}`, { url: 'http://127.0.0.1/' }), 400, /^body\/url must not name/)
    t.same((await app.inject({ url: `/webhooks/${created.id}`, headers: AUTH })).json(), res.json(), 'a refused patch changes nothing')
    t.same((await patch(app, `/webhooks/${created.id}`, { enabled: true })).json().enabled, true)
  })

  t.test('DELETE: 204, then the endpoint is gone', async (t) => {
    const app = await build(t)
    const created = (await post(app, '/webhooks', { url: 'https://a.example/' })).json()
    const res = await app.inject({ method: 'DELETE', url: `/webhooks/${created.id}`, headers: AUTH })
    t.equal(res.statusCode, 204)
    t.equal(res.body, '')
    assertError(t, await app.inject({ method: 'DELETE', url: `/webhooks/${created.id}`, headers: AUTH }), 404)
    assertError(t, await app.inject({ url: `/webhooks/${created.id}`, headers: AUTH }), 404)
    t.same((await app.inject({ url: '/webhooks', headers: AUTH })).json(), [])
  })

  t.test('rotate-secret: 200 with a new secret', async (t) => {
    const app = await build(t)
    const created = (await post(app, '/webhooks', { url: 'https://a.example/' })).json()
    const res = await post(app, `/webhooks/${created.id}/rotate-secret`)
    t.equal(res.statusCode, 200)
    t.same(Object.keys(res.json()), ['secret'])
    t.match(res.json().secret, SECRET)
    t.not(res.json().secret, created.secret)
  })

  t.test('unknown endpoint ids: 404 with the Error body on every operation', async (t) => {
    const app = await build(t)
    const id = 'ep_00000000000000000000000000000000'
    for (const res of [
      await app.inject({ url: `/webhooks/${id}`, headers: AUTH }),
      await patch(app, `/webhooks/${id}`, { enabled: false }),
      await app.inject({ method: 'DELETE', url: `/webhooks/${id}`, headers: AUTH }),
      await post(app, `/webhooks/${id}/rotate-secret`),
      await app.inject({ url: `/webhooks/${id}/deliveries`, headers: AUTH }),
      await post(app, `/webhooks/${id}/deliveries/msg_1/retry`)
    ]) assertError(t, res, 404, /^No webhook endpoint has this id\.$/)
  })

  t.test('ids no store can hold (a NUL): 404 on every operation, as any unknown id; bytes that are not UTF-8 are a malformed URL', async (t) => {
    const app = await build(t)
    const { id: real } = (await post(app, '/webhooks', { url: 'https://hooks.example.com/' })).json()
    const operations = (id: string) => [
      app.inject({ url: `/webhooks/${id}`, headers: AUTH }),
      patch(app, `/webhooks/${id}`, { enabled: false }),
      app.inject({ method: 'DELETE', url: `/webhooks/${id}`, headers: AUTH }),
      post(app, `/webhooks/${id}/rotate-secret`),
      app.inject({ url: `/webhooks/${id}/deliveries`, headers: AUTH }),
      app.inject({ url: `/webhooks/${id}/deliveries?cursor=AAAA`, headers: AUTH }),
      post(app, `/webhooks/${id}/deliveries/msg_1/retry`)
    ]
    for (const id of ['%00', 'ep_%00', `${real}%00`]) {
      for (const res of await Promise.all(operations(id))) assertError(t, res, 404, /^No webhook endpoint has this id\.$/)
    }
    for (const id of ['%00', 'msg_%00']) {
      assertError(t, await post(app, `/webhooks/${real}/deliveries/${id}/retry`), 404, /^This endpoint has no delivery with this id\.$/)
    }
    for (const id of ['%FF', 'ep_%C3%28', '%ED%A0%80']) {
      for (const res of await Promise.all(operations(id))) assertError(t, res, 400, /^The URL is malformed: check its percent-encoding\.$/)
    }
    t.equal((await app.inject({ url: `/webhooks/${real}`, headers: AUTH })).statusCode, 200, 'the real one is untouched')
  })

  t.test('GET /webhooks pages like the plants list: limit (default 20, at most 100), cursor, and a next link while more follow', async (t) => {
    const app = await build(t)
    const made: string[] = []
    for (let i = 0; i < 45; i++) made.push((await post(app, '/webhooks', { url: `https://hooks.example.com/${i}` })).json().id)
    const res = await app.inject({ url: '/webhooks', headers: AUTH })
    t.same([res.json().length, res.headers.link], [20, '</webhooks?limit=20&cursor=' + /cursor=([\w-]+)/.exec(res.headers.link as string)?.[1] + '>; rel="next"'], 'the default: 20 and a next link')
    const order = (await app.inject({ url: '/webhooks?limit=100', headers: AUTH })).json().map((endpoint: { id: string }) => endpoint.id)
    t.same(order, made, 'the whole list in one page of 100, oldest first (those of one millisecond too)')
    const pages = await walk(app, '/webhooks?limit=7')
    t.same(pages.map((page) => page.length), [7, 7, 7, 7, 7, 7, 3], 'no empty page at the end')
    t.same(pages.flat().map((endpoint) => endpoint.id), order, 'the pages together are the whole list, each once, in its order')

    // Deleting and adding while walking: an endpoint there throughout is seen exactly once.
    const deleted = new Set<string>()
    let round = 0
    const seen = (await walk(app, '/webhooks?limit=10', async () => {
      const gone = order[round * 10 + 12]
      deleted.add(gone)
      await app.inject({ method: 'DELETE', url: `/webhooks/${gone}`, headers: AUTH })
      await post(app, '/webhooks', { url: `https://hooks.example.com/late/${round++}` })
    })).flat().map((endpoint) => endpoint.id)
    const throughout = order.filter((id: string) => !deleted.has(id))
    t.same(seen.filter((id) => order.includes(id)).filter((id) => !deleted.has(id)), throughout, 'the ones there throughout, once, in order')
    t.ok(deleted.size >= 4, `${deleted.size} deleted during the walk`)

    const next = (await list(app, '/webhooks?limit=2')).next as string
    const cursor = new URLSearchParams(next.split('?')[1]).get('cursor') as string
    for (const [query, message] of [
      ['limit=0', /^querystring\/limit must be an integer from 1 to 100/], ['limit=101', /^querystring\/limit must be/], ['limit=010', /^querystring\/limit must be/],
      ['limit=1&limit=2', /^querystring\/limit is repeated/], ['offset=2', /^querystring\/offset is not a parameter of this operation$/],
      [`cursor=${cursor.slice(0, -1)}`, /^querystring\/cursor is not one this service gave/],
      [`cursor=${cursor.slice(0, 5)}${cursor[5] === 'A' ? 'B' : 'A'}${cursor.slice(6)}`, /^querystring\/cursor is not one this service gave/],
      [`cursor=${'A'.repeat(257)}`, /^querystring\/cursor must be at most 256 characters long/]
    ] as const) assertError(t, await app.inject({ url: `/webhooks?${query}`, headers: AUTH }), 400, message)
    // A plants cursor, or an endpoint's deliveries cursor, is not one of this list.
    await app.inject({ method: 'POST', url: '/plants', headers: JSON_AUTH, payload: '{"id":1,"name":"a"}' })
    await app.inject({ method: 'POST', url: '/plants', headers: JSON_AUTH, payload: '{"id":2,"name":"b"}' })
    const plants = (await list(app, '/plants?limit=1')).next as string
    assertError(t, await app.inject({ url: `/webhooks?cursor=${new URLSearchParams(plants.split('?')[1]).get('cursor') as string}`, headers: AUTH }), 400, /cursor/)
  })

  t.test('WEBHOOK_ENDPOINT_LIMIT: registering past it is a 409 with the Error body, also when the registrations come at once', async (t) => {
    const app = await build(t, { WEBHOOK_ENDPOINT_LIMIT: '3' })
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => post(app, '/webhooks', { url: `https://hooks.example.com/${i}` })))
    t.same(results.map((res) => res.statusCode).sort(), [...Array(3).fill(201), ...Array(9).fill(409)], 'three created, the rest refused')
    for (const res of results.filter((res) => res.statusCode === 409)) {
      assertError(t, res, 409, /^The service keeps 3 webhook endpoints at most, and has that many: delete one it no longer needs, then register this one\.$/)
    }
    const listed = (await app.inject({ url: '/webhooks', headers: AUTH })).json()
    t.equal(listed.length, 3, 'nothing refused was stored')
    t.equal((await app.inject({ method: 'DELETE', url: `/webhooks/${listed[0].id}`, headers: AUTH })).statusCode, 204)
    t.equal((await post(app, '/webhooks', { url: 'https://hooks.example.com/again' })).statusCode, 201, 'room again once one is deleted')
    t.equal((await post(app, '/webhooks', { url: 'https://hooks.example.com/more' })).statusCode, 409)
  })

  t.test('every operation needs the bearer token', async (t) => {
    const app = await build(t)
    const created = (await post(app, '/webhooks', { url: 'https://a.example/' })).json()
    for (const [method, url] of [['POST', '/webhooks'], ['GET', '/webhooks'], ['GET', `/webhooks/${created.id}`], ['PATCH', `/webhooks/${created.id}`],
      ['DELETE', `/webhooks/${created.id}`], ['POST', `/webhooks/${created.id}/rotate-secret`], ['GET', `/webhooks/${created.id}/deliveries`],
      ['POST', `/webhooks/${created.id}/deliveries/msg_1/retry`]] as const) {
      assertError(t, await app.inject({ method, url }), 401)
    }
  })
})
