import t from 'tap'
import { assertError, AUTH, build, getPlant, postPlant, TOKEN } from '../helpers/build.js'

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
