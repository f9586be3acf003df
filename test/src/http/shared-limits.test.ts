import { createHash } from 'node:crypto'
import fastifyRateLimit from '@fastify/rate-limit'
import Fastify, { type FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { buildApp } from '../../../src/app.js'
import { loadConfig } from '../../../src/config/index.js'
import { connectSharedLimits } from '../../../src/http/shared-limits.js'
import { assertError, AUTH, getPlant, TOKEN } from '../../helpers/build.js'
import { scrape, value } from '../../helpers/metrics.js'
import { startProxy } from '../../helpers/proxy.js'
import { prefixFor, redisUrl } from '../../helpers/redis.js'

interface Logged { level: number, msg: string }

async function app (t: Test, env: Record<string, string>, lines: Logged[] = []): Promise<FastifyInstance> {
  const config = loadConfig({ API_TOKENS: `${TOKEN},scraper`, LOG_LEVEL: 'info', DATABASE_URL: 'sqlite::memory:', MAX_EVENT_LOOP_DELAY: '0', ...env })
  const instance = await buildApp(config, { logStream: { write: (line) => { lines.push(JSON.parse(line)) } } })
  t.teardown(() => instance.close())
  await instance.ready()
  return instance
}

const SCRAPER = { authorization: 'Bearer scraper' }

t.test('two instances on one Redis share RATE_LIMIT_MAX and the failed-authentication limit', async (t) => {
  const { prefix, keys } = await prefixFor(t)
  const env = { REDIS_URL: redisUrl(), REDIS_KEY_PREFIX: prefix, RATE_LIMIT_MAX: '4', AUTH_FAILURE_LIMIT: '3' }
  const [one, two] = [await app(t, env), await app(t, env)]

  // Four requests in all, two on each: the fifth is refused, on either instance.
  for (const instance of [one, two, one, two]) t.equal((await getPlant(instance, 1)).statusCode, 404)
  const refused = await getPlant(one, 1)
  assertError(t, refused, 429, /^Too many requests with this token: the limit is 4 per 60 s/)
  t.match(refused.headers['retry-after'], /^\d+$/)
  assertError(t, await getPlant(two, 1), 429)

  // Three wrong tokens from one address, spread over both: then that address's failures are refused by both.
  const guess = { authorization: 'Bearer guess' }
  for (const instance of [one, two, one]) assertError(t, await getPlant(instance, 1, guess), 401)
  assertError(t, await getPlant(two, 1, guess), 429, /^Too many failed authentications from this address/)
  assertError(t, await one.inject({ url: '/plants/1', headers: guess }), 429)
  // A valid token from that address is served; another address keeps its budget.
  t.equal((await getPlant(two, 1, SCRAPER)).statusCode, 404)
  assertError(t, await two.inject({ url: '/plants/1', headers: guess, remoteAddress: '192.0.2.9' }), 401)

  // The counts are in Redis, under the prefix, named by the fingerprint of the token's digest or the address: never the token.
  const stored = (await keys()).map((key) => key.slice(prefix.length)).sort()
  const fingerprint = (token: string) => createHash('sha256').update(token).digest('hex').slice(0, 12)
  t.same(stored, ['auth-failures:127.0.0.1', 'auth-failures:192.0.2.9', ...[`rate-limit:${fingerprint(TOKEN)}`, `rate-limit:${fingerprint('scraper')}`].sort()])
  t.notOk(stored.some((key) => key.includes(TOKEN)))
})

t.test('Redis going away during traffic: no 5xx, logged once each way, counted in the metrics', async (t) => {
  const { prefix } = await prefixFor(t)
  const proxy = await startProxy(t, redisUrl())
  const lines: Logged[] = []
  const instance = await app(t, { REDIS_URL: redisUrl(proxy.port), REDIS_KEY_PREFIX: prefix, RATE_LIMIT_MAX: '1000' }, lines)
  const statuses = new Map<number, number>()
  const traffic = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const { statusCode } = await getPlant(instance, 1)
      statuses.set(statusCode, (statuses.get(statusCode) ?? 0) + 1)
    }
  }
  const limited = async () => (await getPlant(instance, 1)).headers['x-ratelimit-remaining']

  await traffic(20)
  t.equal(await limited(), '979', 'counted in Redis')

  await proxy.cut()
  const started = Date.now()
  await traffic(50)
  t.ok(Date.now() - started < 5000, 'a refused connection fails each check at once')
  t.equal(await limited(), '1000', 'unchecked: the full budget shows')
  const during = await scrape(instance, SCRAPER)
  t.equal(value(during, 'plant_store_shared_limits_available'), 0)
  t.ok(value(during, 'plant_store_shared_limits_errors_total') >= 50)

  await proxy.restore()
  // ioredis reconnects within its retry delay (two seconds at most).
  let remaining: unknown
  for (let waited = 0; waited < 6000 && (remaining === undefined || remaining === '1000'); waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    remaining = await limited()
  }
  t.match(remaining, /^9\d\d$/, 'counted in Redis again')
  await traffic(20)
  t.equal(value(await scrape(instance, SCRAPER), 'plant_store_shared_limits_available'), 1)

  t.same([...statuses.keys()], [404], 'every answer was the route\'s own: no 5xx, no 429')
  const redisLines = lines.filter((line) => /Redis/.test(line.msg)).map((line) => [line.level, line.msg])
  t.same(redisLines, [
    [40, 'Redis is unavailable: rate limits are not enforced until it answers again'],
    [30, 'Redis answers again: rate limits are shared and enforced']
  ])
})

t.test('Redis unreachable at start: the service starts, serves unlimited, and says so once', async (t) => {
  const { prefix } = await prefixFor(t)
  const proxy = await startProxy(t, redisUrl())
  await proxy.cut()
  const lines: Logged[] = []
  const instance = await app(t, { REDIS_URL: redisUrl(proxy.port), REDIS_KEY_PREFIX: prefix, RATE_LIMIT_MAX: '1', AUTH_FAILURE_LIMIT: '1' }, lines)
  for (let i = 0; i < 3; i++) t.equal((await getPlant(instance, 1)).statusCode, 404)
  for (let i = 0; i < 3; i++) assertError(t, await getPlant(instance, 1, { authorization: 'Bearer guess' }), 401)
  t.same(lines.filter((line) => /Redis/.test(line.msg)).map((line) => line.level), [40])
})

t.test('a Redis that hangs: each check gives up after its timeout and the request goes through', async (t) => {
  const { prefix } = await prefixFor(t)
  const proxy = await startProxy(t, redisUrl())
  const lines: Logged[] = []
  const instance = await app(t, { REDIS_URL: redisUrl(proxy.port), REDIS_KEY_PREFIX: prefix, RATE_LIMIT_MAX: '1000' }, lines)
  t.equal((await getPlant(instance, 1)).statusCode, 404)
  proxy.stall()
  const started = Date.now()
  const res = await getPlant(instance, 1)
  const took = Date.now() - started
  t.equal(res.statusCode, 404)
  t.ok(took >= 400 && took < 3000, `answered after ${took} ms`)
  // Held without an answer, the connection is dropped as one that closed: the next checks fail at once.
  const next = Date.now()
  for (let i = 0; i < 5; i++) t.equal((await getPlant(instance, 1)).statusCode, 404)
  t.ok(Date.now() - next < 1000, `five more in ${Date.now() - next} ms`)
  const metrics = await scrape(instance, SCRAPER)
  t.equal(value(metrics, 'plant_store_shared_limits_available'), 0)
  t.ok(value(metrics, 'plant_store_shared_limits_errors_total') >= 5, 'each counted')
  t.match(lines.filter((line) => /Redis/.test(line.msg)), [{ level: 40, msg: 'Redis is unavailable: rate limits are not enforced until it answers again' }])
})

t.test('the counts of one limit are @fastify/rate-limit\'s own Redis options, its keys under the prefix and its name', async (t) => {
  const { prefix, keys } = await prefixFor(t)
  const seen: string[] = []
  const limits = await connectSharedLimits({
    url: redisUrl(),
    keyPrefix: prefix,
    log: { info: () => {}, warn: () => {} },
    observer: { available: (up) => seen.push(String(up)), failed: () => seen.push('failed') }
  })
  t.teardown(() => limits.close())
  const { redis, nameSpace, checked } = limits.counts('limit:')
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(fastifyRateLimit, { max: 2, timeWindow: 60_000, redis, nameSpace, keyGenerator: () => 'k', onExceeding: checked })
  app.get('/', async () => 'ok')
  app.get('/own', { config: { rateLimit: { max: 1, timeWindow: 60_000 } } }, async () => 'ok')
  t.same([(await app.inject('/')).statusCode, (await app.inject('/')).statusCode, (await app.inject('/')).statusCode], [200, 200, 429])
  t.same([(await app.inject('/own')).statusCode, (await app.inject('/own')).statusCode], [200, 429], 'a route\'s own limit')
  t.same((await keys()).sort(), [`${prefix}limit:GET/own-k`, `${prefix}limit:k`])
  t.same(seen, [], 'nothing to report while Redis answers')
})

t.test('without REDIS_URL: limits in memory, per instance, and no Redis metrics', async (t) => {
  const env = { RATE_LIMIT_MAX: '1' }
  const [one, two] = [await app(t, env), await app(t, env)]
  t.equal((await getPlant(one, 1)).statusCode, 404)
  t.equal((await getPlant(two, 1)).statusCode, 404)
  assertError(t, await getPlant(one, 1), 429)
  t.equal(value(await scrape(one, SCRAPER), 'plant_store_shared_limits_available'), 0, 'not exposed')
  t.notOk((await one.inject({ url: '/metrics', headers: SCRAPER })).body.includes('shared_limits'))
  t.ok(AUTH)
})
