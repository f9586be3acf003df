import t from 'tap'
import { connect, freshPostgresUrl, PG_SKIP } from '../../helpers/postgres.js'

const skip = PG_SKIP && `PostgreSQL: ${PG_SKIP}`

t.test('a connection the server ends between two statements of a transaction is heard, and the transaction fails', { skip }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  const { default: pg } = await import('pg')
  const { inTransaction } = await import('../../../src/store/postgres/transaction.js')
  const pool = new pg.Pool({ connectionString: url, max: 1 })
  t.teardown(() => pool.end())
  const admin = await connect(t, url)
  const heard: Error[] = []

  const outcome = inTransaction(pool, async (client) => {
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
    await admin.query('SELECT pg_terminate_backend($1)', [rows[0].pid])
    // The connection's end arrives while no statement of ours is under way: an 'error' event,
    // which would end the process if nothing listened.
    for (let waited = 0; heard.length === 0 && waited < 5000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10))
    await client.query('SELECT 1')
  }, (error) => heard.push(error))

  await t.rejects(outcome)
  // The server's notice that it ends the connection, then the end itself.
  t.ok(heard.length >= 1, 'the store heard the connection end')
  t.ok(heard.every((error) => /terminat/i.test(error.message)), heard.map((error) => error.message).join('; '))
  // The pool opens a new connection in its place.
  t.same((await pool.query('SELECT 1 AS one')).rows, [{ one: 1 }])
})
