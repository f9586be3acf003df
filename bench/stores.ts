// The bench's databases: a SQLite file or a PostgreSQL database of its own for each
// server, removed at the end, and plants written into one by a single bulk statement.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'

export const PG_URL = process.env.PLANT_STORE_TEST_PG_URL ?? ''

const dir = mkdtempSync(join(tmpdir(), 'plant-store-bench-'))
const databases: string[] = []
// Stopped with Ctrl-C (the servers get the signal too), the run still removes its databases.
process.once('SIGINT', () => { removeDatabases().finally(() => process.exit(130)) })

/** A DATABASE_URL for a new, empty database: a file in a directory of the bench's, or a database on PG_URL's server. */
export async function freshDatabase (kind: 'sqlite' | 'postgres'): Promise<string> {
  const name = `plant_store_bench_${process.pid}_${databases.length}`
  databases.push(name)
  if (kind === 'sqlite') return `sqlite:${join(dir, `${name}.db`)}`
  await adminQuery(`CREATE DATABASE ${name}`)
  const url = new URL(PG_URL)
  url.pathname = `/${name}`
  return url.toString()
}

/** Drops every database the run made. */
export async function removeDatabases (): Promise<void> {
  rmSync(dir, { recursive: true, force: true })
  if (PG_URL !== '') for (const name of databases) await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
}

async function adminQuery (sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

/**
 * Plants 1 to `count` (named `plant <id>`, tagged `bench`) in the `plants (id, name, tag)`
 * table that the database's server made when it started.
 */
export async function fillPlants (databaseUrl: string, count: number): Promise<void> {
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new Database(databaseUrl.slice('sqlite:'.length))
    db.prepare(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
      INSERT INTO plants (id, name, tag) SELECT i, 'plant ' || i, 'bench' FROM n`).run(count)
    // The rows in the database file, not in a WAL that every read would look through.
    db.pragma('wal_checkpoint(TRUNCATE)')
    db.close()
    return
  }
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    await client.query("INSERT INTO plants (id, name, tag) SELECT i, 'plant ' || i, 'bench' FROM generate_series(1, $1::bigint) i", [count])
    // The planner's statistics and a visibility map, as a table of that size would have by then.
    await client.query('VACUUM ANALYZE plants')
  } finally {
    await client.end()
  }
}
