import Fastify from 'fastify'
import t from 'tap'
import health from '../../plugins/health.js'
import { sendError } from '../../src/errors.js'
import { openSqliteStore } from '../../src/store/sqlite/index.js'
import { assertError, build } from '../helpers/build.js'

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
  const Database = (await import('better-sqlite3')).default
  const other = new Database(`${dir}/plants.db`)
  other.exec('BEGIN IMMEDIATE')
  const unready = await app.inject('/ready')
  assertError(t, unready, 503, /unavailable/)
  t.equal(unready.headers['retry-after'], '2', 'with Retry-After')
  t.equal((await app.inject('/health')).statusCode, 200)
  other.exec('COMMIT')
  other.close()
  t.equal((await app.inject('/ready')).statusCode, 200, 'recovers by itself')
})
