import { request as httpRequest, createServer, type IncomingHttpHeaders } from 'node:http'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { pollUntil } from '../helpers/bounded.js'
import { assertError, AUTH, build, getPlant, postPlant } from '../helpers/build.js'
import { startProxy } from '../helpers/proxy.js'
import { prefixFor, redisUrl } from '../helpers/redis.js'
import { bearer, scopedTokensFile } from '../helpers/scopes.js'

const WRONG = { authorization: 'Bearer a-guessed-token' }

t.test('past AUTH_FAILURE_LIMIT failures an address\'s failures get a 429; its valid token is still served', async (t) => {
  const app = await build(t, { AUTH_FAILURE_LIMIT: '3', AUTH_FAILURE_WINDOW: '2000' })
  // Successes are not counted: however many, they leave the budget of failures whole.
  for (let i = 0; i < 50; i++) t.equal((await getPlant(app, 1)).statusCode, 404)
  for (let i = 0; i < 3; i++) assertError(t, await getPlant(app, 1, i === 1 ? {} : WRONG), 401)

  const refused = await getPlant(app, 1, WRONG)
  assertError(t, refused, 429, /^Too many failed authentications from this address: retry in [12] s\.$/)
  t.match(refused.headers['retry-after'], /^[12]$/)
  t.equal(refused.headers.connection, 'close')
  t.equal(refused.headers['www-authenticate'], undefined, 'a refusal, not a challenge')
  assertError(t, await getPlant(app, 1, {}), 429, /failed authentications/)
  assertError(t, await getPlant(app, 1, { authorization: 'Basic abc' }), 429, /failed authentications/)

  t.equal((await getPlant(app, 1)).statusCode, 404, 'the valid token is served')
  t.equal((await app.inject({ url: '/plants/1', headers: WRONG, remoteAddress: '192.0.2.1' })).statusCode, 401, 'another address has its own budget')
  for (const url of ['/health', '/ready', '/openapi.json']) t.equal((await app.inject(url)).statusCode, 200, `${url} is outside the limit`)

  await new Promise((resolve) => setTimeout(resolve, 2100))
  assertError(t, await getPlant(app, 1, WRONG), 401, /not valid/)
})

t.test('with the default limit, 40 failures from an address never lock out its valid token', async (t) => {
  const app = await build(t)
  const statuses = []
  for (let i = 0; i < 40; i++) statuses.push((await getPlant(app, 1, i % 2 === 0 ? WRONG : {})).statusCode)
  t.same(statuses, [...Array(20).fill(401), ...Array(20).fill(429)], 'twenty 401s, then 429s (AUTH_FAILURE_LIMIT is 20)')

  for (let i = 1; i <= 30; i++) {
    t.equal((await postPlant(app, { id: i, name: `plant ${i}` })).statusCode, 200, `create ${i}`)
    t.equal((await getPlant(app, i)).statusCode, 200, `read ${i}`)
    for (const headers of [WRONG, {}]) {
      const refused = await getPlant(app, i, headers)
      t.equal(refused.statusCode, 429)
      t.match(refused.headers['retry-after'], /^[1-9][0-9]*$/)
    }
  }
})

t.test('thirty 403s from one address are no failed authentications, nor requests against the token\'s limit', async (t) => {
  const app = await build(t, { API_TOKENS_FILE: scopedTokensFile(t), RATE_LIMIT_MAX: '25' })
  const reader = bearer('plants:read')
  for (let i = 0; i < 30; i++) t.equal((await postPlant(app, { id: i, name: 'refused' }, reader)).statusCode, 403, `403 number ${i + 1}`)
  t.equal((await getPlant(app, 1, reader)).statusCode, 404, 'the same token, within its scope, is served: not a 429')
  t.equal((await postPlant(app, { id: 1, name: 'Fern' })).statusCode, 200, 'and so is any other token')
  // AUTH_FAILURE_LIMIT is 20: had the 403s counted, a wrong token from that address would get a 429.
  assertError(t, await getPlant(app, 1, WRONG), 401, /not valid/)
})

t.test('a failed authentication is counted once, whatever else happens to the request', async (t) => {
  const app = await build(t, { AUTH_FAILURE_LIMIT: '2' })
  const big = { ...WRONG, 'content-type': 'application/json' }
  assertError(t, await app.inject({ method: 'POST', url: '/plants', headers: big, payload: '{"id": 1, "name": ' }), 401, /not valid/)
  assertError(t, await postPlant(app, { id: 1, name: 'a' }, {}), 401)
  assertError(t, await postPlant(app, { id: 1, name: 'a' }, WRONG), 429)
  t.equal((await postPlant(app, { id: 1, name: 'a' })).statusCode, 200, 'the valid token creates')
})

/**
 * A reverse proxy in front of the service, as the Compose stack's load balancer is:
 * it appends the address its client connected from to X-Forwarded-For.
 */
async function forwardingProxy (t: Test, target: string): Promise<number> {
  const upstream = new URL(target)
  const proxy = createServer((incoming, outgoing) => {
    const forwarded = [incoming.headers['x-forwarded-for'], incoming.socket.remoteAddress].filter((value) => value !== undefined).join(', ')
    const headers: IncomingHttpHeaders = { ...incoming.headers, 'x-forwarded-for': forwarded }
    const relay = httpRequest({ host: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers }, (answer) => {
      outgoing.writeHead(answer.statusCode as number, answer.headers)
      answer.pipe(outgoing)
    })
    relay.on('error', () => outgoing.destroy())
    incoming.pipe(relay)
  })
  proxy.listen(0, '127.0.0.1')
  await once(proxy, 'listening')
  t.teardown(() => { proxy.closeAllConnections(); proxy.close() })
  return (proxy.address() as AddressInfo).port
}

t.test('behind a trusted proxy (TRUST_PROXY): the address is the client\'s, and a valid token behind it is never locked out', async (t) => {
  const app = await build(t, { TRUST_PROXY: '127.0.0.1' })
  const port = await forwardingProxy(t, await app.listen({ port: 0, host: '127.0.0.1' }))
  // Each client connects to the proxy from an address of its own on the loopback network.
  const call = async (from: string, method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const req = httpRequest({ host: '127.0.0.1', port, localAddress: from, method, path, agent: false, headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' } })
    req.end(body === undefined ? undefined : JSON.stringify(body))
    const [res] = await once(req, 'response')
    res.resume()
    await once(res, 'end')
    return { status: res.statusCode as number, retryAfter: res.headers['retry-after'] as string | undefined }
  }

  const attacker = '127.0.0.2'
  for (let i = 0; i < 40; i++) {
    t.equal((await call(attacker, 'GET', '/plants/1', i % 2 === 0 ? WRONG : {})).status, i < 20 ? 401 : 429, `failure ${i + 1}`)
  }
  t.equal((await call('127.0.0.3', 'GET', '/plants/1', WRONG)).status, 401, 'another client behind the same proxy keeps its budget')
  for (let id = 1; id <= 30; id++) {
    t.equal((await call(attacker, 'POST', '/plants', AUTH, { id, name: `plant ${id}` })).status, 200, `create ${id} from the same address`)
    t.equal((await call(attacker, 'GET', `/plants/${id}`, AUTH)).status, 200, `read ${id}`)
    for (const headers of [WRONG, {}]) {
      const refused = await call(attacker, 'GET', `/plants/${id}`, headers)
      t.equal(refused.status, 429)
      t.match(refused.retryAfter, /^[1-9][0-9]*$/)
    }
  }
})

t.test('behind a trusted proxy the address is the one X-Forwarded-For names; otherwise the header is ignored', async (t) => {
  const guess = (app: Awaited<ReturnType<typeof build>>, client: string, headers = WRONG) =>
    app.inject({ url: '/plants/1', headers: { ...headers, 'x-forwarded-for': client }, remoteAddress: '10.0.0.2' })

  const proxied = await build(t, { AUTH_FAILURE_LIMIT: '2', TRUST_PROXY: '10.0.0.0/8' })
  for (let i = 0; i < 2; i++) assertError(t, await guess(proxied, '203.0.113.7'), 401)
  assertError(t, await guess(proxied, '203.0.113.7'), 429)
  t.equal((await guess(proxied, '203.0.113.7', AUTH)).statusCode, 404, 'the valid token from that client is served')
  assertError(t, await guess(proxied, '198.51.100.9'), 401, /not valid/)
  // A client cannot escape by prepending addresses of its own: the proxy appends the real one.
  assertError(t, await guess(proxied, '192.0.2.55, 203.0.113.7'), 429)

  const direct = await build(t, { AUTH_FAILURE_LIMIT: '2' })
  assertError(t, await guess(direct, '203.0.113.1'), 401)
  assertError(t, await guess(direct, '203.0.113.2'), 401)
  assertError(t, await guess(direct, '203.0.113.3'), 429, /failed authentications/)
})

t.test('alone, its counts shared in Redis: kept there under the limit\'s name; Redis cut off, failures are 401s again and each check is counted', async (t) => {
  const Fastify = (await import('fastify')).default
  const { default: authFailures } = await import('../../plugins/auth-failures.js')
  const { connectSharedLimits } = await import('../../src/http/shared-limits.js')
  const { prefix, keys } = await prefixFor(t)
  const proxy = await startProxy(t, redisUrl())
  let failed = 0
  const limits = await connectSharedLimits({ url: redisUrl(proxy.port), keyPrefix: prefix, log: { info () {}, warn () {} }, observer: { available () {}, failed: () => { failed++ } } })
  t.teardown(() => limits.close())
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(authFailures, { max: 1, timeWindow: 60_000, shared: limits.counts('auth-failures:') })
  // A route that fails every authentication, as the auth plugin does.
  app.get('/', async (request, reply) => {
    const refusal = await app.countAuthFailure?.(request, reply)
    return reply.code(refusal?.statusCode ?? 401).send({})
  })
  const get = async () => (await app.inject('/')).statusCode
  t.same([await get(), await get()], [401, 429])
  t.same(await keys(), [`${prefix}auth-failures:127.0.0.1`], 'one count, under the prefix and the name, by address')
  t.equal(failed, 0)

  await proxy.cut()
  await pollUntil(async () => await get() === 401, 5000, 'the limit let go')
  t.same([await get(), await get()], [401, 401], 'not enforced while Redis is away')
  t.ok(failed >= 2, `each check counted (${failed})`)
})
