import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import t from 'tap'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config/index.js'
import type { StoreLogger } from '../src/store/postgres/index.js'
import { StoreUnavailableError } from '../src/store/types.js'
import { assertError, getPlant, postPlant, TOKEN } from './helpers/build.js'
import { freshPostgresUrl, PG_SKIP as skip } from './helpers/postgres.js'
import { startProxy } from './helpers/proxy.js'

const TIMEOUT = 1000
// A 503 comes within the timeout in total, queue, connection and statement included; the rest is a busy machine's slack.
const BOUND = TIMEOUT + 500

function capture (): { levels: string[], log: StoreLogger } {
  const levels: string[] = []
  return { levels, log: { info: () => { levels.push('info') }, warn: () => { levels.push('warn') } } }
}

async function timed (request: Promise<LightMyRequestResponse>): Promise<[LightMyRequestResponse, number]> {
  const start = Date.now()
  const response = await request
  return [response, Date.now() - start]
}

t.test('PostgreSQL cut or stalled: 503 in bounded time, /ready 503, logged once, back without a restart', { skip }, async (t) => {
  const proxy = await startProxy(t, await freshPostgresUrl(t) as string)
  const url = new URL(proxy.url)

  const config = loadConfig({ API_TOKENS: TOKEN, LOG_LEVEL: 'silent', DATABASE_URL: url.href, DATABASE_TIMEOUT: String(TIMEOUT) })
  const app = await buildApp(config)
  t.teardown(() => app.close())
  // The app cannot be handed a log stream, so the logging is watched on a store of the test's own.
  const { openPostgresStore } = await import('../src/store/postgres/index.js')
  const { levels, log } = capture()
  const store = await openPostgresStore({ url: url.href, poolSize: 2, timeout: TIMEOUT, log })
  t.teardown(() => store.close())

  let next = 1
  async function works (app: FastifyInstance, when: string): Promise<void> {
    const id = next++
    t.equal((await postPlant(app, { id, name: 'Fern' })).statusCode, 200, `${when}: POST 200`)
    t.equal((await getPlant(app, id)).body, '{"name":"Fern"}', `${when}: GET 200`)
    t.equal((await app.inject({ method: 'GET', url: '/ready' })).statusCode, 200, `${when}: ready`)
    t.strictSame(await store.create({ id: BigInt(-id), name: 'Fern' }), { outcome: 'created', plant: { name: 'Fern' } })
  }

  async function refused (app: FastifyInstance, when: string): Promise<void> {
    const answers = await Promise.all([
      timed(postPlant(app, { id: 1000, name: 'Ivy' })),
      timed(postPlant(app, { id: 1001, name: 'Ivy' })),
      timed(getPlant(app, 1))
    ])
    // Once requests have met the outage, /ready asks the store again rather than answer the last check's 200.
    answers.push(await timed(app.inject({ method: 'GET', url: '/ready' })))
    for (const [response, ms] of answers) {
      assertError(t, response, 503, /unavailable/)
      t.ok(ms < BOUND, `${when}: answered in ${ms} ms`)
    }
    const calls = await Promise.allSettled([store.create({ id: 1000n, name: 'Ivy' }), store.get(1n), store.check()])
    t.ok(calls.every((call) => call.status === 'rejected' && call.reason instanceof StoreUnavailableError), `${when}: the store refuses`)
  }

  await works(app, 'before')
  t.strictSame(levels, [])

  await proxy.cut()
  await refused(app, 'cut')
  await refused(app, 'still cut')
  t.strictSame(levels, ['warn'], 'the outage is logged once')

  await proxy.restore()
  await works(app, 'after the cut')
  t.strictSame(levels, ['warn', 'info'], 'and the recovery once')

  proxy.stall()
  await refused(app, 'stalled')
  t.strictSame(levels, ['warn', 'info', 'warn'], 'the second outage is logged once')

  await proxy.restore()
  await works(app, 'after the stall')
  t.strictSame(levels, ['warn', 'info', 'warn', 'info'])
})
