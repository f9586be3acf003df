import t from 'tap'
import { databaseSystem, openStore } from '../../../src/store/index.js'

t.test('the database system a DATABASE_URL names', async (t) => {
  t.equal(databaseSystem('sqlite:./data/plants.db'), 'sqlite')
  t.equal(databaseSystem('sqlite::memory:'), 'sqlite')
  t.equal(databaseSystem('postgres://root@127.0.0.1:5432/test'), 'postgresql')
  t.equal(databaseSystem('postgresql://root@db/plants'), 'postgresql')
})

t.test('a DATABASE_URL of no store it has is refused by name, before anything connects', async (t) => {
  // The config refuses it first; a host that opens a store itself hears it here.
  await t.rejects(openStore({ databaseUrl: 'mysql://root@127.0.0.1:3306/test', sqliteSynchronous: 'normal', databasePoolSize: 1, databaseTimeout: 1000 }),
    { message: 'DATABASE_URL: no store for mysql' })
})
