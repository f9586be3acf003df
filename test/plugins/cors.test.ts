import { join } from 'node:path'
import Database from 'better-sqlite3'
import Fastify, { type FastifyInstance, type InjectOptions, type LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import cors from '../../plugins/cors.js'
import { assertError, AUTH, build, postPlant } from '../helpers/build.js'

const APP = 'https://app.example.com'
const LOCAL = 'http://localhost:8080'
const ORIGINS = `${APP},${LOCAL}`
const EXPOSED = 'ETag, Link, Retry-After, WWW-Authenticate'
const ALLOWED_HEADERS = 'Authorization, Content-Type, If-Match, If-None-Match'

const preflight = (url: string, origin: string, method = 'GET'): InjectOptions => ({
  method: 'OPTIONS',
  url,
  headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization,content-type' }
})

const corsHeaders = (res: LightMyRequestResponse) =>
  Object.fromEntries(Object.entries(res.headers).filter(([name]) => name.startsWith('access-control-')))

/** An answer a page of `origin` may read: the origin allowed, the headers it needs exposed. */
function readable (t: Test, res: LightMyRequestResponse, origin: string, what: string): void {
  t.same(corsHeaders(res), { 'access-control-allow-origin': origin, 'access-control-expose-headers': EXPOSED }, `${what}: readable by ${origin}`)
  t.match(res.headers.vary, /\bOrigin\b/, `${what}: Vary: Origin, for caches`)
}

t.test('CORS_ORIGINS unset: no CORS header at all, and OPTIONS is a 404 like any unsupported method', async (t) => {
  const app = await build(t)
  await postPlant(app, { id: 1, name: 'Fern' })
  const answers = [
    await app.inject(preflight('/plants', APP, 'POST')),
    await app.inject({ url: '/plants', headers: { ...AUTH, origin: APP } }),
    await app.inject({ url: '/plants', headers: { origin: APP } }),
    await app.inject({ url: '/plants/%zz', headers: { ...AUTH, origin: APP } })
  ]
  for (const res of answers) {
    t.same(corsHeaders(res), {}, `${res.statusCode}: no access-control-* header`)
    t.equal(res.headers.vary, undefined)
  }
  assertError(t, answers[0], 404, /^No route matches OPTIONS \/plants\.$/)
})

t.test('a preflight from an allowed origin: 204 before authentication, with the methods and headers allowed', async (t) => {
  const app = await build(t, { CORS_ORIGINS: ORIGINS })
  for (const [url, method] of [['/plants', 'POST'], ['/plants', 'GET'], ['/plants/7', 'DELETE'], ['/plants/7', 'PATCH']]) {
    for (const origin of [APP, LOCAL]) {
      const res = await app.inject(preflight(url, origin, method))
      t.equal(res.statusCode, 204, `${method} ${url} from ${origin}: no token needed`)
      t.equal(res.body, '')
      t.equal(res.headers['content-length'], '0')
      t.same(corsHeaders(res), {
        'access-control-allow-origin': origin,
        'access-control-allow-methods': 'GET, POST, DELETE, PATCH',
        'access-control-allow-headers': ALLOWED_HEADERS,
        'access-control-expose-headers': EXPOSED
      })
      t.match(res.headers.vary, /\bOrigin\b/)
      t.equal(res.headers['www-authenticate'], undefined, 'authentication never ran')
      t.match(res.headers['x-request-id'], /./, 'it still names its request')
    }
  }

  // Preflights are not failed authentications: a burst of them leaves the address its budget.
  const strict = await build(t, { CORS_ORIGINS: APP, AUTH_FAILURE_LIMIT: '1' })
  for (let i = 0; i < 5; i++) t.equal((await strict.inject(preflight('/plants', APP))).statusCode, 204)
  t.equal((await strict.inject({ url: '/plants', headers: AUTH })).statusCode, 200)
})

t.test('every answer to an allowed origin is readable, the errors included', async (t) => {
  // Seven plant requests below pass authentication: the eighth is over the limit.
  const app = await build(t, { CORS_ORIGINS: ORIGINS, RATE_LIMIT_MAX: '7' })
  const from = (options: InjectOptions) => app.inject({ ...options, headers: { ...options.headers, origin: APP } })
  await postPlant(app, { id: 1, name: 'Fern' })
  await postPlant(app, { id: 2, name: 'Palm' })

  const page = await from({ url: '/plants?limit=1', headers: AUTH })
  t.equal(page.statusCode, 200)
  t.match(page.headers.link, /rel="next"/)
  readable(t, page, APP, '200 with a Link')

  const created = await from({ method: 'POST', url: '/plants', headers: { ...AUTH, 'content-type': 'application/json' }, payload: '{"id":3,"name":"Aloe"}' })
  t.equal(created.statusCode, 200)
  readable(t, created, APP, 'a create')

  const deleted = await from({ method: 'DELETE', url: '/plants/3', headers: AUTH })
  t.equal(deleted.statusCode, 204)
  readable(t, deleted, APP, '204')

  const unauthenticated = await from({ url: '/plants' })
  assertError(t, unauthenticated, 401)
  t.equal(unauthenticated.headers['www-authenticate'], 'Bearer realm="plant-store"')
  readable(t, unauthenticated, APP, '401')

  const badQuery = await from({ url: '/plants?limit=500', headers: AUTH })
  assertError(t, badQuery, 400, /querystring\/limit/)
  readable(t, badQuery, APP, '400')

  const badUrl = await from({ url: '/plants/%zz', headers: AUTH })
  assertError(t, badUrl, 400, /URL is malformed/)
  readable(t, badUrl, APP, '400 before routing')

  const longParameter = await from({ url: `/plants/${'1'.repeat(1537)}`, headers: AUTH })
  assertError(t, longParameter, 400, /path parameter is longer/)
  readable(t, longParameter, APP, '400 of a parameter too long')

  const missing = await from({ url: '/plants/42', headers: AUTH })
  assertError(t, missing, 404)
  readable(t, missing, APP, '404')

  const noRoute = await from({ url: '/nowhere' })
  assertError(t, noRoute, 404)
  readable(t, noRoute, APP, '404 of an unknown path')

  // An OPTIONS that is not a preflight (it names no method to come) is a method like any other.
  const options = await from({ method: 'OPTIONS', url: '/plants' })
  assertError(t, options, 404, /^No route matches OPTIONS \/plants\.$/)
  readable(t, options, APP, '404 of OPTIONS')

  const limited = await from({ url: '/plants/1', headers: AUTH })
  assertError(t, limited, 429)
  t.match(limited.headers['retry-after'], /^\d+$/)
  readable(t, limited, APP, '429')

  readable(t, await from({ url: '/health' }), APP, 'the probes')
  readable(t, await from({ url: '/openapi.json' }), APP, 'the document')
})

t.test('a 429 for failed authentications is readable too', async (t) => {
  const app = await build(t, { CORS_ORIGINS: APP, AUTH_FAILURE_LIMIT: '1' })
  assertError(t, await app.inject({ url: '/plants', headers: { origin: APP } }), 401)
  const refused = await app.inject({ url: '/plants', headers: { origin: APP } })
  assertError(t, refused, 429, /failed authentications/)
  t.match(refused.headers['retry-after'], /^\d+$/)
  readable(t, refused, APP, '429')
})

t.test('a 503 of an unavailable store is readable, with its Retry-After', async (t) => {
  const path = join(t.testdir(), 'plants.db')
  const app = await build(t, { CORS_ORIGINS: APP, DATABASE_URL: `sqlite:${path}`, DATABASE_TIMEOUT: '100' })
  // Another connection holding the write lock is what a stuck database looks like to SQLite.
  const other = new Database(path)
  t.teardown(() => other.close())
  other.exec('BEGIN EXCLUSIVE')
  for (const res of [await postPlant(app, { id: 1, name: 'Fern' }, { ...AUTH, origin: APP }), await app.inject({ url: '/ready', headers: { origin: APP } })]) {
    assertError(t, res, 503)
    t.match(res.headers['retry-after'], /^\d+$/)
    readable(t, res, APP, '503')
  }
  other.exec('ROLLBACK')
})

t.test('another origin, or none, gets no CORS header: its page cannot read the answer', async (t) => {
  const app = await build(t, { CORS_ORIGINS: ORIGINS })
  // Near misses: an origin is compared exactly, as the browser sends it.
  for (const origin of ['https://evil.example', 'http://app.example.com', 'https://app.example.com:8443', 'https://app.example.com.evil.example', 'null']) {
    const denied = await app.inject(preflight('/plants', origin))
    assertError(t, denied, 404)
    t.same(corsHeaders(denied), {}, `preflight from ${origin}: refused`)
    const get = await app.inject({ url: '/plants', headers: { ...AUTH, origin } })
    t.equal(get.statusCode, 200, 'served as ever (CORS is for the browser to enforce)')
    t.same(corsHeaders(get), {}, `GET from ${origin}: no access-control-* header`)
    t.same(corsHeaders(await app.inject({ url: '/plants/%zz', headers: { origin } })), {}, 'nor before routing')
  }
  const sameOrigin = await app.inject({ url: '/plants', headers: AUTH })
  t.same(corsHeaders(sameOrigin), {}, 'no Origin header: no CORS header')
})

t.test('CORS_ORIGINS=*: any origin, named as *', async (t) => {
  const app = await build(t, { CORS_ORIGINS: '*' })
  for (const origin of [APP, 'http://127.0.0.1:5173']) {
    const res = await app.inject(preflight('/plants/1', origin, 'DELETE'))
    t.equal(res.statusCode, 204)
    t.equal(res.headers['access-control-allow-origin'], '*')
    t.equal(res.headers['access-control-allow-headers'], ALLOWED_HEADERS, 'Authorization is named: * would not cover it')
    readable(t, await app.inject({ url: '/plants', headers: { origin } }), '*', '401 to any origin')
  }
  t.same(corsHeaders(await app.inject({ url: '/plants', headers: AUTH })), {}, 'no Origin header: no CORS header')
})

t.test('the CORS routes stay out of the API document', async (t) => {
  const on = await build(t, { CORS_ORIGINS: ORIGINS })
  const off = await build(t)
  t.same((await on.inject('/openapi.json')).json(), (await off.inject('/openapi.json')).json())
})

t.test('the plugin alone: origins are checked when registered; none leaves the host as it was', async (t) => {
  const host = async (origins: unknown): Promise<FastifyInstance> => {
    const app = Fastify()
    t.teardown(() => app.close())
    app.get('/hello', async () => 'hi')
    await app.register(cors, { origins } as { origins: string[] })
    return app
  }
  for (const origins of [undefined, 'https://a.example', [''], [7]]) {
    await t.rejects(host(origins), /^cors: options\.origins must be an array of origins/, JSON.stringify(origins))
  }
  const none = await host([])
  t.same(corsHeaders(await none.inject({ url: '/hello', headers: { origin: APP } })), {})
  t.equal(none.hasDecorator('corsHeaders'), false)
  t.equal((await none.inject({ method: 'OPTIONS', url: '/hello', headers: { origin: APP, 'access-control-request-method': 'GET' } })).statusCode, 404)

  const some = await host([APP])
  readable(t, await some.inject({ url: '/hello', headers: { origin: APP } }), APP, 'a bare host')
  t.equal((await some.inject(preflight('/hello', APP))).statusCode, 204)
})
