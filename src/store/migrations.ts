/** A migration to run: its SQL, and the schema version it brings the database to. */
export interface MigrationStep {
  sql: string
  version: number
}

/** The steps that bring a schema at `version` to this build's. */
export function pendingMigrations (migrations: readonly string[], version: number): MigrationStep[] {
  if (version > migrations.length) {
    throw new Error(`the database schema is version ${version}, newer than this build's ${migrations.length}`)
  }
  return migrations.slice(version).map((sql, index) => ({ sql, version: version + index + 1 }))
}
