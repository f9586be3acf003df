import type pg from 'pg'

// Versioned migrations: MIGRATIONS[n] brings the schema from version n to n + 1. Append only.
const MIGRATIONS = [
  'CREATE TABLE plants (id BIGINT PRIMARY KEY, name TEXT NOT NULL, tag TEXT)',
  // Serves a tag-filtered page by key: WHERE tag = $ AND id > $ ORDER BY id.
  'CREATE INDEX plants_tag_id ON plants (tag, id)'
]

/** Brings the database to this build's schema version, in one transaction. */
export async function migrate (pool: pg.Pool): Promise<void> {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    // Instances starting together take turns here; the lock ends with the transaction.
    await client.query("SELECT pg_advisory_xact_lock(hashtext('plant-store:migrations'))")
    await client.query('CREATE TABLE IF NOT EXISTS plant_store_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())')
    const { rows } = await client.query<{ version: number }>('SELECT coalesce(max(version), 0) AS version FROM plant_store_migrations')
    const version = rows[0].version
    if (version > MIGRATIONS.length) {
      throw new Error(`the database schema is version ${version}, newer than this build's ${MIGRATIONS.length}`)
    }
    for (let step = version; step < MIGRATIONS.length; step++) {
      await client.query(MIGRATIONS[step])
      await client.query('INSERT INTO plant_store_migrations (version) VALUES ($1)', [step + 1])
    }
    await client.query('COMMIT')
    client.release()
  } catch (error) {
    // Releasing with the error drops the connection, which rolls the transaction back.
    client.release(error as Error)
    throw error
  }
}
