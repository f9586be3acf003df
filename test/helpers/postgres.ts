import { randomBytes } from 'node:crypto'
import type { Client } from 'pg'
import type { Test } from 'tap'

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

/**
 * A new, empty database of the test's own on the server PLANT_STORE_TEST_PG_URL
 * names, dropped when the test ends; undefined when that variable is not set.
 */
export async function freshPostgresUrl (t: Test): Promise<string | undefined> {
  const base = process.env.PLANT_STORE_TEST_PG_URL
  if (!base) return undefined
  const name = `plant_store_test_${randomBytes(8).toString('hex')}`
  await admin(base, `CREATE DATABASE ${name}`)
  // FORCE ends the connections a failed test may have left open.
  t.teardown(() => admin(base, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
  const url = new URL(base)
  url.pathname = `/${name}`
  return url.toString()
}
