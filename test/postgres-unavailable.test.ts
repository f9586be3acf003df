import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { Client } from 'pg'
import t, { type Test } from 'tap'
import { StoreUnavailableError } from '../src/store/types.js'
import { assertError, AUTH, build, getPlant, patchPlant, postPlant } from './helpers/build.js'
import { connect, freshPostgresUrl, PG_SKIP as skip } from './helpers/postgres.js'
import { startProxy } from './helpers/proxy.js'

const TIMEOUT = 2000

/** A fresh database, its name, the app on it, and an administrator's session on the server's own database. */
async function setUp (t: Test): Promise<{ url: string, name: string, admin: Client, app: FastifyInstance }> {
  const url = await freshPostgresUrl(t) as string
  const admin = await connect(t, process.env.PLANT_STORE_TEST_PG_URL as string)
  const app = await build(t, { DATABASE_URL: url, DATABASE_TIMEOUT: String(TIMEOUT) })
  return { url, name: new URL(url).pathname.slice(1), admin, app }
}

// A failover, or an administrator, ends every session: the store's next ones meet the new state.
async function endSessions (admin: Client, name: string): Promise<void> {
  await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name])
}

function assertUnavailable (t: Test, response: LightMyRequestResponse, what: string): void {
  assertError(t, response, 503, /unavailable/)
  t.match(response.headers['retry-after'], /^[1-9][0-9]*$/, `${what}: Retry-After`)
}

/** POSTs until one is a 200 (a pooled session still in the old state fails once and is replaced). */
async function recovers (t: Test, app: FastifyInstance, id: number): Promise<void> {
  const statuses: number[] = []
  for (let attempt = 0; attempt < 20 && statuses.at(-1) !== 200; attempt++) {
    statuses.push((await postPlant(app, { id, name: 'Back' })).statusCode)
    if (statuses.at(-1) !== 200) await sleep(100)
  }
  t.equal(statuses.at(-1), 200, `a create succeeds again (${statuses.join(', ')})`)
  t.ok(statuses.every((status) => status === 200 || status === 503), 'never anything but 503 on the way')
  for (let i = 1; i <= 5; i++) t.equal((await postPlant(app, { id: id + i, name: 'Back' })).statusCode, 200, 'and stays so')
  t.equal((await app.inject('/ready')).statusCode, 200, '/ready is 200 again')
}

t.test('a read-only database (as a standby after a failover): 503 with Retry-After, reads answer, /ready 503, back when writable', { skip }, async (t) => {
  const { url, name, admin, app } = await setUp(t)
  t.equal((await postPlant(app, { id: 1, name: 'Fern' })).statusCode, 200)
  t.equal((await app.inject('/ready')).statusCode, 200)

  // A store of the test's own, through a proxy that counts the statements it sends.
  const proxy = await startProxy(t, url)
  const { openPostgresStore } = await import('../src/store/postgres/index.js')
  const store = await openPostgresStore({ url: proxy.url, poolSize: 1, timeout: TIMEOUT })
  t.teardown(() => store.close())

  // Per database, not server-wide: only this test's database turns read-only.
  await admin.query(`ALTER DATABASE ${name} SET default_transaction_read_only = on`)
  await endSessions(admin, name)

  const creates = await Promise.all([2, 3, 4, 5].map((id) => postPlant(app, { id, name: 'Ivy' })))
  creates.forEach((response, i) => assertUnavailable(t, response, `create ${i}`))
  assertUnavailable(t, await patchPlant(app, 1, { name: 'Ivy' }), 'change')
  assertUnavailable(t, await app.inject({ method: 'DELETE', url: '/plants/1', headers: { ...AUTH, 'if-match': '*' } }), 'conditional delete')
  t.equal((await getPlant(app, 1)).body, '{"name":"Fern"}', 'reads still answer, and nothing refused was applied')
  assertUnavailable(t, await app.inject('/ready'), '/ready')

  // A batch that fails as a whole for want of a writable store goes once, not once per row.
  await t.rejects(store.check(), StoreUnavailableError)
  proxy.statements = 0
  const batch = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => store.create({ id: BigInt(100 + i), name: 'Moss' })))
  t.ok(batch.every((r) => r.status === 'rejected' && r.reason instanceof StoreUnavailableError), 'every create of the batch is refused as unavailable')
  t.equal(proxy.statements, 1, 'one statement for the batch of 50, no single inserts after it')

  await admin.query(`ALTER DATABASE ${name} RESET default_transaction_read_only`)
  await recovers(t, app, 10)
  t.same(await store.create({ id: 100n, name: 'Moss' }), { outcome: 'created', plant: { name: 'Moss' } })
})

t.test('a database that refuses connections (55000): 503 with Retry-After everywhere, /ready 503, back when it accepts them', { skip }, async (t) => {
  const { name, admin, app } = await setUp(t)
  t.equal((await postPlant(app, { id: 1, name: 'Fern' })).statusCode, 200)

  await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`)
  await endSessions(admin, name)
  assertUnavailable(t, await postPlant(app, { id: 2, name: 'Ivy' }), 'create')
  assertUnavailable(t, await patchPlant(app, 1, { tag: 'x' }), 'change')
  assertUnavailable(t, await getPlant(app, 1), 'read')
  assertUnavailable(t, await app.inject({ url: '/plants?limit=5', headers: AUTH }), 'list')
  assertUnavailable(t, await app.inject('/ready'), '/ready')

  await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`)
  await recovers(t, app, 10)
  t.same((await patchPlant(app, 1, { tag: 'back' })).json(), { name: 'Fern', tag: 'back' }, 'a change commits again')
})

t.test('a missing database (3D000) and an unknown role (28000) are outages, not failures of the service', { skip }, async (t) => {
  const { openPostgresStore } = await import('../src/store/postgres/index.js')
  const missing = new URL(process.env.PLANT_STORE_TEST_PG_URL as string)
  missing.pathname = `/plant_store_missing_${randomBytes(6).toString('hex')}`
  await t.rejects(openPostgresStore({ url: missing.href, poolSize: 1, timeout: TIMEOUT }), StoreUnavailableError)
  const stranger = new URL(process.env.PLANT_STORE_TEST_PG_URL as string)
  stranger.username = `plant_store_nobody_${randomBytes(6).toString('hex')}`
  await t.rejects(openPostgresStore({ url: stranger.href, poolSize: 1, timeout: TIMEOUT }), StoreUnavailableError)
})
