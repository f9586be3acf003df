import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import Database from 'better-sqlite3'
import t from 'tap'
import { RETRY_AFTER_UNAVAILABLE } from '../../../src/http/errors.js'
import { CHECK_EVERY } from '../../../src/store/ready-check.js'
import { AUTH, assertError, build } from '../../helpers/build.js'

t.test('every 503 of an unavailable store says when to retry (Retry-After)', async (t) => {
  const path = join(t.testdir(), 'plants.db')
  const app = await build(t, { DATABASE_URL: `sqlite:${path}`, DATABASE_TIMEOUT: '100' })

  // Another connection holding the write lock is what a stuck database looks like to SQLite
  // (reads still succeed in WAL mode: the writes and /ready, which writes, get the 503).
  const other = new Database(path)
  t.teardown(() => other.close())
  other.exec('BEGIN EXCLUSIVE')
  const requests = [
    { method: 'POST' as const, url: '/plants', headers: { ...AUTH, 'content-type': 'application/json' }, payload: '{"id":1,"name":"Fern"}' },
    { method: 'DELETE' as const, url: '/plants/1', headers: AUTH },
    { method: 'GET' as const, url: '/ready' }
  ]
  for (const request of requests) {
    const res = await app.inject(request)
    assertError(t, res, 503)
    t.equal(res.headers['retry-after'], String(RETRY_AFTER_UNAVAILABLE), `${request.method} ${request.url}: Retry-After`)
  }
  other.exec('ROLLBACK')
  // The store's check stands for a second (CHECK_EVERY): the next one finds it writable.
  await sleep(CHECK_EVERY)
  const ready = await app.inject('/ready')
  t.equal(ready.statusCode, 200)
  t.equal(ready.headers['retry-after'], undefined, 'only a 503 carries it')
})
