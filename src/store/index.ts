import type { Config } from '../config.js'
import { openSqliteStore } from './sqlite.js'
import type { PlantStore } from './types.js'

export * from './types.js'
export { openSqliteStore } from './sqlite.js'

export type StoreConfig = Pick<Config, 'databaseUrl' | 'sqliteSynchronous' | 'databasePoolSize' | 'databaseTimeout'>

/** Opens the store that DATABASE_URL names: `sqlite:<path>`, `sqlite::memory:`, or `postgres://…`. */
export async function openStore (config: StoreConfig): Promise<PlantStore> {
  const { databaseUrl } = config
  if (databaseUrl.startsWith('sqlite:')) {
    return openSqliteStore({
      path: databaseUrl.slice('sqlite:'.length),
      synchronous: config.sqliteSynchronous,
      busyTimeout: config.databaseTimeout
    })
  }
  throw new Error(`DATABASE_URL: no store for ${databaseUrl.split(':')[0]}`)
}
