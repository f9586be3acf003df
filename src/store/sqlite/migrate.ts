import type Database from 'better-sqlite3'

// Versioned migrations: step N brings user_version from N to N + 1. Append only.
const MIGRATIONS = [
  'CREATE TABLE plants (id INTEGER PRIMARY KEY, name TEXT NOT NULL, tag TEXT) STRICT',
  // Serves a tag-filtered page by key: WHERE tag = ? AND id > ? ORDER BY id.
  'CREATE INDEX plants_tag_id ON plants (tag, id)'
]

/** Brings the database to this build's schema version, in one transaction. */
export function migrate (db: Database.Database): void {
  // IMMEDIATE takes the write lock first, so instances starting together migrate one at a time.
  db.transaction(() => {
    const version = db.pragma('user_version', { simple: true }) as number
    if (version > MIGRATIONS.length) {
      throw new Error(`the database schema is version ${version}, newer than this build's ${MIGRATIONS.length}`)
    }
    for (const step of MIGRATIONS.slice(version)) db.exec(step)
    db.pragma(`user_version = ${MIGRATIONS.length}`)
  }).immediate()
}
