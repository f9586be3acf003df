import { renameSync, unlinkSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { openSqliteStore } from '../src/store/sqlite/index.js'
import { assertError, AUTH, build, getPlant, postPlant } from './helpers/build.js'

/**
 * Runs the app on `path`, lets `change` happen to the file under it, then
 * creates: every create must be refused, since none could be kept, and
 * after a restart every create that was acknowledged must be there.
 */
async function underTheApp (t: Test, path: string, change: () => void): Promise<void> {
  const app = await build(t, { DATABASE_URL: `sqlite:${path}` })
  t.equal((await postPlant(app, { id: 1, name: 'Before' })).statusCode, 200)
  t.equal((await app.inject('/ready')).statusCode, 200)

  change()
  const acknowledged: number[] = []
  for (const id of [2, 3, 4]) {
    const response = await postPlant(app, { id, name: 'After' })
    if (response.statusCode === 200) acknowledged.push(id)
    assertError(t, response, 503, /unavailable/)
    t.match(response.headers['retry-after'], /^[1-9][0-9]*$/, 'with Retry-After')
    assertError(t, await app.inject('/ready'), 503, /unavailable/)
  }
  await app.close()

  const again = await build(t, { DATABASE_URL: `sqlite:${path}` })
  for (const id of [2, 3, 4]) {
    t.equal((await getPlant(again, id)).statusCode, acknowledged.includes(id) ? 200 : 404, `after a restart, plant ${id} is there if it was acknowledged`)
  }
  t.same(acknowledged, [], 'nothing was acknowledged after the file changed')
}

t.test('the database file deleted under the running app: 503 and /ready 503, nothing acknowledged is lost', async (t) => {
  const path = join(t.testdir(), 'plants.db')
  await underTheApp(t, path, () => unlinkSync(path))
})

t.test('the database file replaced under the running app: 503 and /ready 503, nothing acknowledged is lost', async (t) => {
  const dir = t.testdir()
  const path = join(dir, 'plants.db')
  // Another database, closed (so its WAL is folded in), moved over the path as a restore would.
  const other = openSqliteStore({ path: join(dir, 'restored.db') })
  await other.create({ id: 99n, name: 'Restored' })
  await other.close()
  await underTheApp(t, path, () => renameSync(join(dir, 'restored.db'), path))
})

t.test('the WAL deleted under the running store: writes and the probe are refused', async (t) => {
  const path = join(t.testdir(), 'plants.db')
  const store = openSqliteStore({ path })
  t.teardown(() => store.close())
  await store.create({ id: 1n, name: 'Before' })
  unlinkSync(`${path}-wal`)
  await t.rejects(store.create({ id: 2n, name: 'After' }), { name: 'StoreUnavailableError', message: /plants\.db-wal was deleted/ })
  await t.rejects(store.check(), { message: /plants\.db-wal was deleted while the store had it open: nothing is written until a restart/ })
})

t.test('the database file deleted: the webhook routes answer 503 too, and register nothing that a restart would lose', async (t) => {
  const path = join(t.testdir(), 'plants.db')
  const app = await build(t, { DATABASE_URL: `sqlite:${path}` })
  const register = () => app.inject({ method: 'POST', url: '/webhooks', headers: AUTH, payload: { url: 'https://hooks.example.com/plants' } })
  t.equal((await register()).statusCode, 201)
  unlinkSync(path)
  const refused = await register()
  assertError(t, refused, 503, /unavailable/)
  t.match(refused.headers['retry-after'], /^[1-9][0-9]*$/, 'with Retry-After')
  assertError(t, await app.inject({ method: 'GET', url: '/webhooks', headers: AUTH }), 503, /unavailable/)
})
