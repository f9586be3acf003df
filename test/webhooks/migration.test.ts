import Database from 'better-sqlite3'
import t, { type Test } from 'tap'
import { MIGRATIONS as POSTGRES } from '../../src/store/postgres/migrate.js'
import { MIGRATIONS as SQLITE } from '../../src/store/sqlite/migrate.js'
import { verifyWebhook } from '../../src/client/verify-webhook.js'
import { AUTH, build, postPlant, sqliteUrl } from '../helpers/build.js'
import { connect, freshPostgresUrl, PG_SKIP } from '../helpers/postgres.js'
import { startReceiver, type Receiver } from '../helpers/receiver.js'

// A database of a release before the typed outbox (every migration but the last three: they are
// append only: the typed outbox, finished deliveries and the change feed), with a delivery still
// pending, taken over by this build on start.
const BEFORE = 3
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
const BODY = '{"id":9007199254740993,"name":"Old \\"one\\"","tag":"x"}'

type Run = (sql: string, values?: unknown[]) => Promise<void>

async function fill (run: Run, receiver: Receiver, now: number | Date): Promise<void> {
  await run('INSERT INTO plants (id, name, tag) VALUES (9007199254740993, \'Old "one"\', \'x\')')
  await run('INSERT INTO webhook_endpoints (id, url, enabled, secret, created_at) VALUES (?, ?, ?, ?, ?)', ['ep_old', `${receiver.origin}/old`, true, SECRET, now])
  await run('INSERT INTO webhook_endpoints (id, url, enabled, secret, created_at) VALUES (?, ?, ?, ?, ?)', ['ep_off', `${receiver.origin}/off`, false, SECRET, now])
  await run('INSERT INTO webhook_events (plant_id, body, created_at) VALUES (9007199254740993, ?, ?)', [BODY, now])
  await run(`INSERT INTO webhook_deliveries (id, event_id, endpoint_id, status, next_attempt_at, created_at)
    SELECT 'msg_0000000000000000000000000001', max(id), 'ep_old', 'pending', ?, ? FROM webhook_events`, [now, now])
}

async function takeOver (t: Test, databaseUrl: string, receiver: Receiver): Promise<void> {
  const app = await build(t, { DATABASE_URL: databaseUrl, WEBHOOK_ALLOW_PRIVATE: 'true' })
  const [pending] = await receiver.waitFor(1)
  t.equal(pending.headers['webhook-id'], 'msg_0000000000000000000000000001', 'the pending delivery is sent')
  t.equal(pending.body.toString(), BODY, 'its body byte for byte')
  t.same(verifyWebhook(SECRET, pending.headers, pending.body), { id: 9007199254740993n, name: 'Old "one"', tag: 'x' })

  t.equal((await postPlant(app, { id: 2, name: 'new' })).statusCode, 200)
  const [, created] = await receiver.waitFor(2)
  t.same([created.url, created.body.toString()], ['/old', '{"id":2,"name":"new"}'], 'an endpoint of before receives plant.created in the origin body')
  const endpoint = (await app.inject({ url: '/webhooks/ep_old', headers: AUTH })).json()
  t.equal(endpoint.events, undefined, 'and has no events')
  const listed = (await app.inject({ url: '/webhooks/ep_old/deliveries', headers: AUTH })).json()
  t.same(listed.map((d: { type: string }) => d.type), ['plant.created', 'plant.created'])
  t.equal((await app.inject({ method: 'PATCH', url: '/plants/2', headers: { ...AUTH, 'content-type': 'application/json' }, payload: { name: 'renamed' } })).statusCode, 200)
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.equal(receiver.received.length, 2, 'nothing to the disabled endpoint, no plant.updated without events')
  // The change feed starts with this build: the changes made since, not the outbox's rows of before.
  const feed = await app.inject({ url: '/events', headers: AUTH })
  t.same(feed.json().map((event: { type: string, data: unknown }) => [event.type, event.data]),
    [['plant.created', { id: 2, name: 'new' }], ['plant.updated', { id: 2, name: 'renamed' }]], 'the feed holds the changes made since the migration')
}

t.test('SQLite: a database of the previous release', async (t) => {
  const receiver = await startReceiver(t)
  const url = sqliteUrl(t)
  const db = new Database(url.slice('sqlite:'.length))
  db.pragma('journal_mode = WAL')
  for (const sql of SQLITE.slice(0, -BEFORE)) db.exec(sql)
  db.pragma(`user_version = ${SQLITE.length - BEFORE}`)
  await fill(async (sql, values = []) => { db.prepare(sql).run(...values.map((v) => typeof v === 'boolean' ? Number(v) : v)) }, receiver, Date.now())
  db.close()
  await takeOver(t, url, receiver)
})

t.test('PostgreSQL: a database of the previous release', { skip: PG_SKIP && `PostgreSQL: ${PG_SKIP}` }, async (t) => {
  const receiver = await startReceiver(t)
  const url = await freshPostgresUrl(t) as string
  const db = await connect(t, url)
  await db.query('CREATE TABLE plant_store_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())')
  for (const [i, sql] of POSTGRES.slice(0, -BEFORE).entries()) {
    await db.query(sql)
    await db.query('INSERT INTO plant_store_migrations (version) VALUES ($1)', [i + 1])
  }
  await fill(async (sql, values = []) => {
    let n = 0
    await db.query(sql.replace(/\?/g, () => `$${++n}`), values)
  }, receiver, new Date())
  await takeOver(t, url, receiver)
})
