import t from 'tap'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config/index.js'
import { openSqliteStore } from '../../src/store/index.js'
import { AUTH, getPlant, postPlant, TOKEN } from '../helpers/build.js'

t.test('a store handed to buildApp is the one used, and closed with the app', async (t) => {
  const sqlite = openSqliteStore({ path: ':memory:' })
  let closed = 0
  const store = { ...sqlite, close: async () => { closed++; await sqlite.close() } }
  const app = await buildApp(loadConfig({ API_TOKENS: TOKEN, LOG_LEVEL: 'silent', DATABASE_URL: 'sqlite:/nonexistent/never/opened.db' }), { store })

  t.equal((await postPlant(app, { id: 5, name: 'Cactus' }, AUTH)).statusCode, 200)
  t.same(await sqlite.get(5n), { name: 'Cactus' })
  t.same((await getPlant(app, 5)).json(), { name: 'Cactus' })
  await app.close()
  t.equal(closed, 1)
})
