import { createHash } from 'node:crypto'
import t from 'tap'
import { pollUntil } from '../helpers/bounded.js'
import { assertError, AUTH, build, getPlant, postPlant, TOKEN } from '../helpers/build.js'
import { startProxy } from '../helpers/proxy.js'
import { prefixFor, redisUrl } from '../helpers/redis.js'

const OTHER = { authorization: 'Bearer another-token' }

t.test('RATE_LIMIT_MAX per RATE_LIMIT_WINDOW, per token: then 429 with Retry-After', async (t) => {
  const app = await build(t, { API_TOKENS: `${TOKEN},another-token`, RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW: '2000' })
  t.equal((await postPlant(app, { id: 1, name: 'Fern' })).statusCode, 200)
  t.equal((await getPlant(app, 1)).statusCode, 200)
  const third = await getPlant(app, 2)
  t.equal(third.statusCode, 404, 'every answer counts, not only successes')
  t.equal(third.headers['x-ratelimit-remaining'], '0')

  const limited = await getPlant(app, 1)
  assertError(t, limited, 429, /^Too many requests with this token: the limit is 3 per 2 s; retry in \d+ seconds?\.$/)
  t.match(limited.headers['retry-after'], /^[12]$/)
  t.match(limited.headers['x-request-id'], /./)
  assertError(t, await postPlant(app, { id: 2, name: 'Palm' }), 429)

  // The key is the token: another client is not held back by this one.
  t.equal((await getPlant(app, 1, OTHER)).statusCode, 200)
  // The probes, the documents and unauthenticated requests are outside the limit.
  for (const url of ['/health', '/ready', '/openapi.json', '/docs']) t.equal((await app.inject(url)).statusCode, 200, url)
  assertError(t, await getPlant(app, 1, {}), 401)

  await new Promise((resolve) => setTimeout(resolve, 2100))
  t.equal((await getPlant(app, 1)).statusCode, 200, 'a new window, a new budget')
})

t.test('no RATE_LIMIT_MAX: no limit', async (t) => {
  const app = await build(t)
  for (let i = 0; i < 200; i++) {
    const res = await getPlant(app, 1)
    if (res.statusCode !== 404) t.fail(`request ${i}: ${res.statusCode}`)
  }
  t.equal((await getPlant(app, 1)).headers['x-ratelimit-limit'], undefined)
})

t.test('the limit is counted after authentication: a wrong token never spends a budget', async (t) => {
  const app = await build(t, { RATE_LIMIT_MAX: '1' })
  for (let i = 0; i < 3; i++) assertError(t, await getPlant(app, 1, { authorization: 'Bearer nope' }), 401)
  t.equal((await getPlant(app, 1, AUTH)).statusCode, 404)
  assertError(t, await getPlant(app, 1, AUTH), 429)
})

t.test('the plugin needs the auth plugin before it: it counts per token', async (t) => {
  const Fastify = (await import('fastify')).default
  const { default: rateLimit } = await import('../../plugins/rate-limit.js')
  const app = Fastify()
  t.teardown(() => app.close())
  app.register(rateLimit, { max: 1, timeWindow: 1000 })
  await t.rejects(async () => { await app.ready() }, /plant-store-auth/)
})

t.test('counts shared in Redis: kept there under the limit\'s name; Redis cut off, every request goes through and each check is counted', async (t) => {
  const Fastify = (await import('fastify')).default
  const { default: auth } = await import('../../plugins/auth.js')
  const { default: rateLimit } = await import('../../plugins/rate-limit.js')
  const { connectSharedLimits } = await import('../../src/http/shared-limits.js')
  const { prefix, keys } = await prefixFor(t)
  const proxy = await startProxy(t, redisUrl())
  let failed = 0
  const limits = await connectSharedLimits({ url: redisUrl(proxy.port), keyPrefix: prefix, log: { info () {}, warn () {} }, observer: { available () {}, failed: () => { failed++ } } })
  t.teardown(() => limits.close())
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(auth, { tokens: [TOKEN] })
  await app.register(rateLimit, { max: 2, timeWindow: 60_000, shared: limits.counts('rate-limit:') })
  app.get('/', async () => 'ok')
  const get = async () => (await app.inject({ url: '/', headers: AUTH })).statusCode
  t.same([await get(), await get(), await get()], [200, 200, 429])
  t.same(await keys(), [`${prefix}rate-limit:${createHash('sha256').update(TOKEN).digest('hex').slice(0, 12)}`], 'one count, under the prefix and the name')
  t.equal(failed, 0)

  await proxy.cut()
  await pollUntil(async () => await get() === 200, 5000, 'the limit let go')
  t.same([await get(), await get(), await get()], [200, 200, 200], 'not enforced while Redis is away')
  t.ok(failed >= 3, `each check counted (${failed})`)
})
