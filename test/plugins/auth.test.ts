import { createHash } from 'node:crypto'
import Fastify from 'fastify'
import t, { type Test } from 'tap'
import auth, { SCOPES, type AuthOptions } from '../../plugins/auth.js'
import { sendError } from '../../src/http/errors.js'
import { assertError, build, postPlant, TOKEN } from '../helpers/build.js'

/** The auth plugin alone on a bare Fastify, with a route that counts how often a body is parsed. */
async function bare (t: Test, tokens: AuthOptions['tokens'] = ['alpha', 'beta-token']) {
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

t.test('the fields it sets are request decorators: every request of its scope has them from the start', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  const before: unknown[] = []
  // Runs before the auth hook: the fields are already there, empty.
  app.addHook('onRequest', async (request) => {
    before.push(['tokenDigest', 'tokenFingerprint', 'tokenScopes'].map((field) => [Object.hasOwn(request, field), (request as unknown as Record<string, unknown>)[field]]))
  })
  await app.register(auth, { tokens: ['alpha'] })
  app.get('/', async (request) => ({ fingerprint: request.tokenFingerprint, scopes: request.tokenScopes?.size }))
  for (const field of ['tokenDigest', 'tokenFingerprint', 'tokenScopes']) t.ok(app.hasRequestDecorator(field), `${field} is declared`)
  const res = await app.inject({ url: '/', headers: { authorization: 'Bearer alpha' } })
  t.same(res.json(), { fingerprint: createHash('sha256').update('alpha').digest('hex').slice(0, 12), scopes: SCOPES.length })
  t.equal((await app.inject('/')).statusCode, 401)
  t.same(before, [[[true, undefined], [true, undefined], [true, undefined]], [[true, undefined], [true, undefined], [true, undefined]]])
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
  for (const tokens of [[], [''], [5], undefined, [null], [{ token: 'a' }], [{ token: 'a', scopes: [] }], [{ token: '', scopes: ['metrics'] }],
    [{ token: 'a', scopes: ['plants:admin'] }], [{ token: 'a', scopes: 'metrics' }], ['a', { token: 'a', scopes: ['metrics'] }],
    [{ token: 'a', scopes: ['metrics'] }, { token: 'a', scopes: ['metrics', 'webhooks'] }]] as unknown as string[][]) {
    const app = Fastify()
    await t.rejects(async () => { await app.register(auth, { tokens }).ready() }, /options.tokens must be a non-empty array/, JSON.stringify(tokens))
  }
  const twice = Fastify()
  await twice.register(auth, { tokens: [{ token: 'a', scopes: ['metrics', 'webhooks'] }, { token: 'a', scopes: ['webhooks', 'metrics'] }, 'b', 'b'] }).ready()
  t.pass('a token given twice with the same scopes is accepted')
})

/** The auth plugin with scoped tokens, and routes that declare a scope, or none. */
async function scoped (t: Test) {
  const { app, parsed } = await bare(t, ['every', { token: 'reader', scopes: ['plants:read'] }, { token: 'writer', scopes: ['plants:read', 'plants:write'] }])
  app.get('/read', { config: { scope: 'plants:read' } }, async (request) => ({ fingerprint: request.tokenFingerprint, scopes: [...request.tokenScopes ?? []] }))
  app.post('/write', { config: { scope: 'plants:write' } }, async (request) => ({ body: request.body }))
  app.get('/undeclared', async () => 'open to every scope')
  return { app, parsed }
}

t.test('a token without the route\'s scope: 403 naming it, with the insufficient_scope challenge, before the body is read', async (t) => {
  const { app, parsed } = await scoped(t)
  const read = await app.inject({ url: '/read', headers: { authorization: 'Bearer reader' } })
  t.same(read.json(), { fingerprint: createHash('sha256').update('reader').digest('hex').slice(0, 12), scopes: ['plants:read'] },
    'the request knows its token by a short fingerprint of its digest, and what it may do')
  t.same((await app.inject({ url: '/read', headers: { authorization: 'Bearer every' } })).json().scopes, ['plants:read', 'plants:write', 'webhooks', 'metrics', 'events:read'])

  const write = await app.inject({ method: 'POST', url: '/write', headers: { authorization: 'Bearer reader', 'content-type': 'application/json' }, payload: '{not json' })
  assertError(t, write, 403, /^This token may not do this: the operation needs the scope plants:write, which the token does not have\.$/)
  t.equal(write.headers['www-authenticate'], 'Bearer realm="plant-store", error="insufficient_scope", scope="plants:write"')
  t.equal(write.headers.connection, 'close', 'its body is not read')
  t.same(parsed, [], 'the body was never parsed: a 403, not a 400')

  const allowed = await app.inject({ method: 'POST', url: '/write', headers: { authorization: 'Bearer writer', 'content-type': 'application/json' }, payload: '{"a":3}' })
  t.same(allowed.json(), { body: { a: 3 } })
  t.equal((await app.inject({ method: 'POST', url: '/write', headers: { authorization: 'Bearer every', 'content-type': 'application/json' }, payload: '{}' })).statusCode, 200)
})

t.test('a route that declares no scope is open only to tokens with every scope; an unknown path stays a 404', async (t) => {
  const { app } = await scoped(t)
  t.equal((await app.inject({ url: '/undeclared', headers: { authorization: 'Bearer every' } })).body, 'open to every scope')
  const refused = await app.inject({ url: '/undeclared', headers: { authorization: 'Bearer writer' } })
  assertError(t, refused, 403, /open only to tokens with every scope/)
  t.equal(refused.headers['www-authenticate'], 'Bearer realm="plant-store", error="insufficient_scope"')
  t.equal((await app.inject({ url: '/nowhere', headers: { authorization: 'Bearer reader' } })).statusCode, 404, 'not a 403')
  assertError(t, await post(app, { authorization: 'Bearer reader' }, '{not json'), 403, /every scope/)
})

t.test('a host that ignores scopes: plain tokens may use every route, declared or not', async (t) => {
  const { app } = await bare(t, ['alpha'])
  app.get('/read', { config: { scope: 'plants:read' } }, async () => 'read')
  app.get('/undeclared', async () => 'undeclared')
  for (const url of ['/read', '/undeclared']) t.equal((await app.inject({ url, headers: { authorization: 'Bearer alpha' } })).statusCode, 200, url)
})

t.test('in the app: auth before a malformed or oversized body, on every plant route', async (t) => {
  const app = await build(t, { BODY_LIMIT: '100' })
  assertError(t, await postPlant(app, '{"id":', {}), 401)
  assertError(t, await postPlant(app, '{"id":', { authorization: 'Bearer wrong' }), 401)
  assertError(t, await postPlant(app, 'x'.repeat(1000), { authorization: 'Bearer wrong' }), 401)
  assertError(t, await postPlant(app, 'x'.repeat(1000), { authorization: `bearer ${TOKEN}` }), 413)
  assertError(t, await postPlant(app, '{"id":', { authorization: `bearer ${TOKEN}` }), 400)
})
