import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import t from 'tap'
import health from '../../plugins/health.js'
import { sendError } from '../../src/http/errors.js'
import { openSqliteStore } from '../../src/store/sqlite/index.js'
import { assertError, build, sqliteUrl } from '../helpers/build.js'

t.test('/health and /ready answer without a token', async (t) => {
  const app = await build(t)
  for (const url of ['/health', '/ready']) {
    const res = await app.inject(url)
    t.equal(res.statusCode, 200, url)
    t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
    t.equal(res.body, '{"status":"ok"}')
  }
})

t.test('/ready is a 503 while the store does not answer, /health stays 200', async (t) => {
  const dir = t.testdir()
  const store = openSqliteStore({ path: `${dir}/plants.db`, timeout: 200 })
  const app = Fastify()
  app.setErrorHandler(sendError)
  await app.register(health, { store })
  t.teardown(async () => { await app.close(); await store.close() })
  t.equal((await app.inject('/ready')).statusCode, 200)

  // Another connection holding the write lock is what a stuck database looks like to SQLite.
  const other = new Database(`${dir}/plants.db`)
  other.exec('BEGIN IMMEDIATE')
  // The answer is the last check's for up to a second.
  const unready = await untilStatus(app, 503)
  assertError(t, unready, 503, /unavailable/)
  t.equal(unready.headers['retry-after'], '2', 'with Retry-After')
  t.equal((await app.inject('/health')).statusCode, 200)
  other.exec('COMMIT')
  other.close()
  t.equal((await untilStatus(app, 200)).statusCode, 200, 'recovers by itself')
})

/** GET /ready until it answers `status`, for three seconds at most; the last answer. */
async function untilStatus (app: FastifyInstance, status: number): Promise<LightMyRequestResponse> {
  let res = await app.inject('/ready')
  for (const end = Date.now() + 3000; res.statusCode !== status && Date.now() < end; res = await app.inject('/ready')) {
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return res
}

t.test('/ready asks the store at most once a second, however many probes come at once or in a row', async (t) => {
  const app = await build(t, { DATABASE_URL: sqliteUrl(t) })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/ready`

  // Seen from outside the service: the store's check writes its probe row, and a trigger of
  // this test's own connection logs every such write with the time the check gave it.
  const db = new Database(join(t.testdirName, 'plants.db'))
  t.teardown(() => db.close())
  db.exec(`CREATE TABLE seen_checks (at INTEGER NOT NULL);
    CREATE TRIGGER seen_insert AFTER INSERT ON plant_store_probe BEGIN INSERT INTO seen_checks VALUES (new.at); END;
    CREATE TRIGGER seen_update AFTER UPDATE ON plant_store_probe BEGIN INSERT INTO seen_checks VALUES (new.at); END;`)
  const checks = () => (db.prepare('SELECT at FROM seen_checks ORDER BY at').all() as Array<{ at: number }>).map((row) => row.at)

  const probe = async () => (await fetch(url)).status
  const start = Date.now()
  const burst = await Promise.all(Array.from({ length: 200 }, probe))
  const took = Date.now() - start
  t.same(new Set(burst), new Set([200]), '200 probes at once: each answered 200')
  // One check, and one more for each second the burst took to be answered on a busy machine.
  t.ok(checks().length <= Math.floor(took / 1000) + 1, `answered in ${took} ms by ${checks().length} checks of the store`)

  // 2.5 s of probes, 20 at a time, one round after another.
  let probes = 0
  while (Date.now() - start < 2500) {
    const round = await Promise.all(Array.from({ length: 20 }, probe))
    t.ok(round.every((status) => status === 200))
    probes += round.length
  }
  const seen = checks()
  const elapsed = Date.now() - start
  t.ok(seen.length <= Math.ceil(elapsed / 1000) + 1, `${probes + 200} probes in ${elapsed} ms: ${seen.length} checks`)
  t.ok(seen.length >= 2, 'and the answer is renewed')
  for (let i = 1; i < seen.length; i++) t.ok(seen[i] - seen[i - 1] >= 990, `a second between checks: ${seen[i] - seen[i - 1]} ms`)
})
