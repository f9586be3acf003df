import { once } from 'node:events'
import { connect, type AddressInfo } from 'node:net'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import t from 'tap'
import loadShedding, { RETRY_AFTER } from '../../plugins/load-shedding.js'
import { sendError } from '../../src/http/errors.js'
import { pollUntil } from '../helpers/bounded.js'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config/index.js'
import { assertError, build, getPlant, TOKEN } from '../helpers/build.js'
import { scrape, value } from '../helpers/metrics.js'

/** Keeps the event loop busy for `ms`, as a CPU-bound burst would. */
function block (ms: number): void {
  const end = Date.now() + ms
  while (Date.now() < end);
}

/**
 * Saturates the event loop (100 ms busy, a tick free, again) until a request
 * to the API is shed or `limit` ms pass; returns the last answer.
 */
async function saturate (app: FastifyInstance, limit: number): Promise<LightMyRequestResponse> {
  const end = Date.now() + limit
  let res: LightMyRequestResponse
  do {
    block(100)
    await new Promise((resolve) => setImmediate(resolve))
    res = await getPlant(app, 1)
  } while (res.statusCode !== 503 && Date.now() < end)
  return res
}

t.test('a saturated event loop: the API answers 503 with Retry-After, the probes still answer, then it recovers', async (t) => {
  const lines: Array<{ level: number, reqId: string, msg: string }> = []
  const config = loadConfig({ API_TOKENS: TOKEN, DATABASE_URL: 'sqlite::memory:', MAX_EVENT_LOOP_DELAY: '30' })
  const app = await buildApp(config, { logStream: { write: (line) => { lines.push(JSON.parse(line)) } } })
  t.teardown(() => app.close())
  t.equal((await getPlant(app, 1)).statusCode, 404, 'served while the loop is idle')

  const shed = await saturate(app, 5000)
  assertError(t, shed, 503, /^The service is overloaded right now; retry in 10 seconds\.$/)
  t.equal(shed.headers['retry-after'], String(RETRY_AFTER))
  t.match(shed.headers['x-request-id'], /./)
  // A deliberate refusal: its one line at info, no error line.
  const own = lines.filter((line) => line.reqId === shed.headers['x-request-id'])
  t.equal(own.length, 1)
  t.match(own[0], { level: 30, msg: 'request completed' })
  t.equal((await app.inject('/health')).statusCode, 200, 'liveness is not shed')
  t.equal((await app.inject('/ready')).statusCode, 200)

  // Idle again: the next samples of the loop's delay let requests through.
  let res = shed
  for (let waited = 0; res.statusCode === 503 && waited < 5000; waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    res = await getPlant(app, 1)
  }
  t.equal(res.statusCode, 404, 'recovers by itself')

  // Every 503 the API answered was a refusal, counted as such.
  const families = await scrape(app)
  const shedCount = value(families, 'plant_store_requests_refused_total', { reason: 'load_shedding' })
  t.ok(shedCount >= 1)
  t.equal(shedCount, value(families, 'http_requests_total', { method: 'GET', route: '/plants/{id}', status_code: '503' }))
})

t.test('MAX_EVENT_LOOP_DELAY=0: nothing is shed', async (t) => {
  const app = await build(t, { MAX_EVENT_LOOP_DELAY: '0' })
  const res = await saturate(app, 2500)
  t.equal(res.statusCode, 404)
})

t.test('a turn of the loop busy with requests past the limit: the rest of its requests are refused, at once', async (t) => {
  const app = Fastify()
  app.setErrorHandler(sendError)
  await app.register(loadShedding, { maxEventLoopDelay: 50 })
  // Each request keeps the loop busy for 30 ms, as a parse of a large body would.
  app.get('/work', async () => {
    block(30)
    return { done: true }
  })
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })

  // Pipelined on one connection, the eight arrive together: one turn of the loop takes them all up.
  const socket = connect((app.server.address() as AddressInfo).port, '127.0.0.1')
  t.teardown(() => socket.destroy())
  await once(socket, 'connect')
  let received = ''
  socket.on('data', (chunk) => { received += chunk })
  const answers = () => [...received.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]))
  socket.write('GET /work HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(8))
  await pollUntil(() => answers().length === 8, 10_000, () => `eight answers: ${JSON.stringify(received)}`)
  const statuses = answers()
  t.equal(statuses[0], 200, 'the first is served')
  t.equal(statuses[7], 503, 'the last is refused')
  t.same(statuses, [...statuses].sort(), 'served until the turn had run past the limit, refused after')
  t.ok(statuses.filter((status) => status === 503).length >= 5, `${statuses.join(' ')}: no more than the limit's worth served`)
  t.match(received, /retry-after: 10\r\n/i)

  // The next turn starts afresh.
  received = ''
  socket.write('GET /work HTTP/1.1\r\nHost: x\r\n\r\n')
  await pollUntil(() => answers().length === 1, 10_000, 'an answer')
  t.same(answers(), [200])
})
