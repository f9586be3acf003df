import Fastify from 'fastify'
import t, { type Test } from 'tap'
import auth from '../../plugins/auth.js'
import { sendError } from '../../src/errors.js'
import { assertError, build, postPlant, TOKEN } from '../helpers/build.js'

/** The auth plugin alone on a bare Fastify, with a route that counts how often a body is parsed. */
async function bare (t: Test, tokens: string[] = ['alpha', 'beta-token']) {
  const app = Fastify()
  app.setErrorHandler(sendError)
  const parsed: string[] = []
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    parsed.push(body as string)
    done(null, JSON.parse(body as string))
  })
  await app.register(auth, { tokens })
  app.post('/echo', async (request) => ({ digest: request.tokenDigest, body: request.body }))
  t.teardown(() => app.close())
  return { app, parsed }
}

type Headers = Record<string, string>
const post = (app: Awaited<ReturnType<typeof bare>>['app'], headers: Headers, payload = '{"a":1}') =>
  app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json', ...headers }, payload })

t.test('every configured token is accepted; the scheme word is case-insensitive', async (t) => {
  const { app } = await bare(t)
  for (const authorization of ['Bearer alpha', 'bearer alpha', 'BEARER beta-token', 'BeArEr beta-token', 'Bearer   alpha  ']) {
    const res = await post(app, { authorization })
    t.equal(res.statusCode, 200, authorization)
    t.match(res.json().digest, /^[0-9a-f]{64}$/, 'the request knows the token by its digest only')
  }
})

t.test('no credentials: 401 with a challenge and no error code', async (t) => {
  const { app, parsed } = await bare(t)
  const res = await post(app, {})
  assertError(t, res, 401, /Authorization: Bearer/)
  t.equal(res.headers['www-authenticate'], 'Bearer realm="plant-store"')
  t.same(parsed, [], 'the body was never parsed')
})

t.test('malformed credentials: 401 with a challenge and no error code', async (t) => {
  const { app } = await bare(t)
  for (const authorization of ['Bearer', 'Bearer ', 'Bearer    ', 'Basic YWxwaGE6', 'Token alpha', 'alpha', 'Bearer:alpha']) {
    const res = await post(app, { authorization })
    assertError(t, res, 401, /malformed/)
    t.equal(res.headers['www-authenticate'], 'Bearer realm="plant-store"', authorization)
  }
})

t.test('an unknown token: 401 with error="invalid_token"', async (t) => {
  const { app } = await bare(t)
  for (const authorization of ['Bearer alph', 'Bearer alphaa', 'Bearer ALPHA', 'Bearer beta-token,alpha']) {
    const res = await post(app, { authorization })
    assertError(t, res, 401, /not valid/)
    t.equal(res.headers['www-authenticate'], 'Bearer realm="plant-store", error="invalid_token"')
    t.notMatch(res.body, /alph|beta/, 'the token is never echoed')
  }
})

t.test('authentication runs before the body is read or parsed', async (t) => {
  const { app, parsed } = await bare(t)
  assertError(t, await post(app, { authorization: 'Bearer nope' }, '{not json'), 401)
  assertError(t, await post(app, {}, '{not json'), 401)
  t.same(parsed, [], 'no unauthenticated body reached the parser')
  const ok = await post(app, { authorization: 'Bearer alpha' }, '{"a":2}')
  t.same(ok.json().body, { a: 2 })
  t.same(parsed, ['{"a":2}'])
})

t.test('the realm is configurable', async (t) => {
  const app = Fastify()
  app.setErrorHandler(sendError)
  await app.register(auth, { tokens: ['x'], realm: 'garden' })
  app.get('/', async () => 'ok')
  t.equal((await app.inject('/')).headers['www-authenticate'], 'Bearer realm="garden"')
})

t.test('options are checked at registration', async (t) => {
  for (const tokens of [[], [''], [5], undefined] as unknown as string[][]) {
    const app = Fastify()
    await t.rejects(async () => { await app.register(auth, { tokens }).ready() }, /options.tokens must be a non-empty array/)
  }
})

t.test('in the app: auth before a malformed or oversized body, on every plant route', async (t) => {
  const app = await build(t, { BODY_LIMIT: '100' })
  assertError(t, await postPlant(app, '{"id":', {}), 401)
  assertError(t, await postPlant(app, '{"id":', { authorization: 'Bearer wrong' }), 401)
  assertError(t, await postPlant(app, 'x'.repeat(1000), { authorization: 'Bearer wrong' }), 401)
  assertError(t, await postPlant(app, 'x'.repeat(1000), { authorization: `bearer ${TOKEN}` }), 413)
  assertError(t, await postPlant(app, '{"id":', { authorization: `bearer ${TOKEN}` }), 400)
})
