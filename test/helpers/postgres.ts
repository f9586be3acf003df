import { randomBytes } from 'node:crypto'
import type { Client } from 'pg'
import tap, { type Test } from 'tap'

export { PG_SKIP } from './requires.js'

/** A connection of the test's own, to look at or hold the database behind the store's back. */
export async function connect (t: Test, url: string): Promise<Client> {
  // Loaded on demand, so that SQLite-only runs never load pg.
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  t.teardown(() => client.end())
  return client
}

async function admin (url: string, sql: string): Promise<void> {
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

// Databases this process has used and emptied, for its next tests: a new database costs
// PostgreSQL a copy of its template and its drop, an empty schema much less. Dropped at exit.
const spare: string[] = []
const made: string[] = []
let dropAtExit = false

function urlOf (base: string, name: string): string {
  const url = new URL(base)
  url.pathname = `/${name}`
  return url.toString()
}

async function create (base: string): Promise<string> {
  const name = `plant_store_test_${randomBytes(8).toString('hex')}`
  await admin(base, `CREATE DATABASE ${name}`)
  made.push(name)
  if (!dropAtExit) {
    dropAtExit = true
    tap.teardown(async () => { await Promise.all(made.map((name) => drop(base, name))) })
  }
  return name
}

async function drop (base: string, name: string): Promise<void> {
  // FORCE ends the connections a failed test may have left open.
  await admin(base, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
}

// Emptied for the next test: the connections left open ended, the schema dropped with all it
// holds; a database that cannot be emptied (its connections refused) is dropped instead.
async function release (base: string, name: string): Promise<void> {
  try {
    await admin(base, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid()`)
    await admin(urlOf(base, name), 'DROP SCHEMA public CASCADE; CREATE SCHEMA public')
    spare.push(name)
  } catch {
    made.splice(made.indexOf(name), 1)
    await drop(base, name)
  }
}

/**
 * An empty database of the test's own on the server PLANT_STORE_TEST_PG_URL names,
 * emptied when the test ends; undefined when that variable is not set.
 */
export async function freshPostgresUrl (t: Test): Promise<string | undefined> {
  const base = process.env.PLANT_STORE_TEST_PG_URL
  if (!base) return undefined
  const name = spare.pop() ?? await create(base)
  t.teardown(() => release(base, name))
  return urlOf(base, name)
}
