import { request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import t from 'tap'
import { assertError, AUTH, build, getPlant, patchPlant, postPlant, TOKEN } from '../helpers/build.js'
import { histogram, samples, scrape, value } from '../helpers/metrics.js'
import { forEachStore } from '../helpers/stores.js'

const REQUESTS = 'http_requests_total'
const DURATIONS = 'http_request_duration_seconds'
const labels = (method: string, route: string, status: number) => ({ method, route, status_code: String(status) })

t.test('GET /metrics needs the bearer token and answers the text format', async (t) => {
  const app = await build(t)
  const refused = await app.inject('/metrics')
  assertError(t, refused, 401)
  t.match(refused.headers['www-authenticate'], /^Bearer realm="plant-store"$/)
  assertError(t, await app.inject({ url: '/metrics', headers: { authorization: 'Bearer wrong' } }), 401)

  const response = await app.inject({ url: '/metrics', headers: AUTH })
  t.equal(response.statusCode, 200)
  t.equal(response.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8')
  t.match(response.body, /^# HELP /)

  // Listed in the API document, with the bearer scheme and the scope's errors.
  const operation = (await app.inject('/openapi.json')).json().paths['/metrics'].get
  t.same(operation.security, [{ bearerAuth: ['metrics'] }])
  t.ok(operation.responses['200'].content['text/plain; version=0.0.4; charset=utf-8'].schema.type === 'string')
  t.same(Object.keys(operation.responses).sort(), ['200', '401', '403', '408', '429', '503'])
})

t.test('known traffic gives exact counts by method, route template and status', async (t) => {
  const app = await build(t)
  for (const id of [1, 2, 3]) t.equal((await postPlant(app, { id, name: 'Fern' })).statusCode, 200)
  t.equal((await postPlant(app, { id: 1, name: 'Palm' })).statusCode, 409)
  t.equal((await getPlant(app, 1)).statusCode, 200)
  t.equal((await getPlant(app, 2)).statusCode, 200)
  t.equal((await getPlant(app, 99)).statusCode, 404)
  t.equal((await getPlant(app, 'x')).statusCode, 400)
  t.equal((await app.inject({ method: 'DELETE', url: '/plants/3', headers: AUTH })).statusCode, 204)
  t.equal((await patchPlant(app, 1, { tag: 'shade' })).statusCode, 200)
  t.equal((await patchPlant(app, 2, { name: 'Palm' })).statusCode, 200)
  t.equal((await patchPlant(app, 3, { name: 'Palm' })).statusCode, 404)
  t.equal((await patchPlant(app, 2, { name: 'Ivy' }, { ...AUTH, 'if-match': '"stale"' })).statusCode, 412)
  t.equal((await app.inject({ url: '/plants?limit=2', headers: AUTH })).statusCode, 200)
  t.equal((await getPlant(app, 1, {})).statusCode, 401)
  for (const path of ['/nope', '/plants/1/leaves', '/pl%20ants']) t.equal((await app.inject({ url: path, headers: AUTH })).statusCode, 404, path)
  t.equal((await app.inject({ method: 'PUT', url: '/plants/1', headers: AUTH })).statusCode, 404)
  t.equal((await app.inject('/health')).statusCode, 200)

  const families = await scrape(app)
  const expected: Array<[string, string, number, number]> = [
    ['POST', '/plants', 200, 3],
    ['POST', '/plants', 409, 1],
    ['GET', '/plants/{id}', 200, 2],
    ['GET', '/plants/{id}', 404, 1],
    ['GET', '/plants/{id}', 400, 1],
    ['GET', '/plants/{id}', 401, 1],
    ['DELETE', '/plants/{id}', 204, 1],
    ['PATCH', '/plants/{id}', 200, 2],
    ['PATCH', '/plants/{id}', 404, 1],
    ['PATCH', '/plants/{id}', 412, 1],
    ['GET', '/plants', 200, 1],
    ['GET', 'not_found', 404, 3],
    ['PUT', 'not_found', 404, 1],
    ['GET', '/health', 200, 1]
  ]
  for (const [method, route, status, n] of expected) {
    t.equal(value(families, REQUESTS, labels(method, route, status)), n, `${method} ${route} ${status}: ${n}`)
    t.equal(histogram(families, DURATIONS, labels(method, route, status)).count, n, `${method} ${route} ${status}: ${n} timed`)
  }
  // Nothing else but these (the scrape itself is counted once it is answered).
  t.equal(samples(families, REQUESTS).length, expected.length)
  const timed = histogram(families, DURATIONS, labels('POST', '/plants', 200))
  t.ok(timed.sum > 0, 'durations are recorded')
  t.equal(timed.buckets['+Inf'], 3)
  t.equal(Object.keys(timed.buckets).length, 15, 'fourteen bounds and +Inf')

  const again = await scrape(app)
  t.equal(value(again, REQUESTS, labels('GET', '/metrics', 200)), 1, 'the previous scrape')
})

t.test('label cardinality stays bounded whatever paths and methods clients send', async (t) => {
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address() as AddressInfo
  // Methods Node's parser accepts; a random path each time.
  const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'PROPFIND', 'MKCOL', 'PURGE', 'LOCK', 'SEARCH', 'REPORT']
  for (let i = 0; i < 300; i++) {
    const method = methods[i % methods.length]
    const path = `/${Math.random().toString(36).slice(2)}/${i}?q=${i}`
    const id = i % 3 === 0 ? `/plants/${i}` : path
    await new Promise<void>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: address.port, method, path: id, headers: AUTH }, (res) => {
        res.resume()
        res.on('end', resolve)
      })
      req.on('error', reject)
      req.end()
    })
  }
  const families = await scrape(app)
  const series = samples(families, REQUESTS)
  const routes = new Set(series.map((s) => s.labels?.route))
  const seen = new Set(series.map((s) => s.labels?.method))
  t.same([...routes].sort(), ['/plants/{id}', 'not_found'])
  t.same([...seen].sort(), ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'other'].sort())
  t.ok(series.length <= 20, `${series.length} series for 300 distinct requests`)
  t.equal(series.reduce((sum, s) => sum + Number(s.value), 0), 300)
})

forEachStore(t, (t, build) => {
  t.test('the store: batch sizes, commit durations, queue depth, availability', async (t) => {
    const app = await build(t)
    const before = await scrape(app)
    t.equal(histogram(before, 'plant_store_batch_size').count, 0)
    t.equal(value(before, 'plant_store_queue_depth'), 0)
    t.equal(value(before, 'plant_store_available'), 1)
    t.equal(value(before, 'plant_store_outages_total'), 0)

    // Twenty creates in one turn of the event loop share one batch; two more come one by one.
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => postPlant(app, { id: i + 1, name: 'Fern' })))
    t.same(results.map((r) => r.statusCode), Array(20).fill(200))
    await postPlant(app, { id: 100, name: 'Palm' })
    await patchPlant(app, 100, { tag: 'sun' })
    await app.inject({ method: 'DELETE', url: '/plants/100', headers: AUTH })

    const after = await scrape(app)
    const sizes = histogram(after, 'plant_store_batch_size')
    t.equal(sizes.count, 4)
    t.equal(sizes.sum, 23)
    t.equal(sizes.buckets['1'], 3, 'three batches of one: a create, a change, a delete')
    t.equal(sizes.buckets['10'], 3)
    t.equal(sizes.buckets['20'], 4, 'and one of twenty')
    const commits = histogram(after, 'plant_store_commit_duration_seconds')
    t.equal(commits.count, 4)
    t.ok(commits.sum > 0)
    t.equal(value(after, 'plant_store_queue_depth'), 0)
  })
})

t.test('refusals: the per-token rate limit and the failed-authentication limit', async (t) => {
  const app = await build(t, { API_TOKENS: `${TOKEN},scraper`, RATE_LIMIT_MAX: '2', AUTH_FAILURE_LIMIT: '2' })
  const scraper = { authorization: 'Bearer scraper' }
  for (let i = 0; i < 5; i++) await getPlant(app, 1)
  // From an address of its own: the limit holds per address, and the scrape comes from another.
  for (let i = 0; i < 5; i++) await app.inject({ url: '/plants/1', headers: { authorization: 'Bearer guess' }, remoteAddress: '192.0.2.7' })
  const families = await scrape(app, scraper)
  t.equal(value(families, 'plant_store_requests_refused_total', { reason: 'rate_limit' }), 3)
  t.equal(value(families, 'plant_store_requests_refused_total', { reason: 'auth_failures' }), 3)
  t.equal(value(families, 'plant_store_requests_refused_total', { reason: 'load_shedding' }), 0)
  t.equal(value(families, REQUESTS, labels('GET', '/plants/{id}', 429)), 6)
})

t.test('the process: Node\'s default metrics', async (t) => {
  const app = await build(t)
  const families = await scrape(app)
  for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
    t.ok(samples(families, name).length > 0, name)
  }
})

t.test('two apps in one process keep their own metrics', async (t) => {
  const one = await build(t)
  const two = await build(t)
  await getPlant(one, 1)
  t.equal(value(await scrape(one), REQUESTS, labels('GET', '/plants/{id}', 404)), 1)
  t.equal(value(await scrape(two), REQUESTS, labels('GET', '/plants/{id}', 404)), 0)
})

t.test('METRICS=false: no /metrics', async (t) => {
  const app = await build(t, { METRICS: 'false' })
  assertError(t, await app.inject({ url: '/metrics', headers: AUTH }), 404)
  t.equal((await app.inject('/openapi.json')).json().paths['/metrics'], undefined)
})

t.test('a store outage: available 0 and one outage counted, then 1 again', async (t) => {
  const path = join(t.testdir(), 'plants.db')
  const app = await build(t, { DATABASE_URL: `sqlite:${path}`, DATABASE_TIMEOUT: '100' })
  const other = new Database(path)
  other.exec('BEGIN IMMEDIATE')
  for (const id of [1, 2]) t.equal((await postPlant(app, { id, name: 'Fern' })).statusCode, 503)
  const during = await scrape(app)
  t.equal(value(during, 'plant_store_available'), 0)
  t.equal(value(during, 'plant_store_outages_total'), 1, 'one outage, however many failures')
  t.equal(histogram(during, 'plant_store_batch_size').count, 2, 'failed batches are measured too')
  other.exec('ROLLBACK')
  other.close()
  t.equal((await postPlant(app, { id: 3, name: 'Fern' })).statusCode, 200)
  const after = await scrape(app)
  t.equal(value(after, 'plant_store_available'), 1)
  t.equal(value(after, 'plant_store_outages_total'), 1)
})
