// src/store: the store port (types.ts), its adapters in sqlite/ and postgres/, and what
// both share (group commit, outages, ETags, webhook rows).

import type { Config } from '../config/index.js'
import type { StoreObserver } from './observer.js'
import type { FastifyBaseLogger } from 'fastify'
import { openSqliteStore } from './sqlite/index.js'
import type { PlantStore } from './types.js'

export { StoreUnavailableError, type CreateOutcome, type CreateResult, type ListQuery, type PlantRecord, type PlantStore, type WriteOptions } from './types.js'
export { openSqliteStore, type SqliteStoreOptions } from './sqlite/index.js'
export type { AttemptOutcome, ClaimedDelivery, Delivery, DeliveryPage, DeliveryStatus, Endpoint, EndpointPage, EndpointPatch, NewEndpoint, WebhookStore } from './webhook-types.js'
export { EndpointLimitError } from './webhook-types.js'
export type { StoreLogger } from './outage.js'
export type { EventFeed, FeedEvent, FeedPage, FeedQuery } from './feed-types.js'
export { combineObservers, type StoreObserver } from './observer.js'

export type StoreConfig = Pick<Config, 'databaseUrl' | 'sqliteSynchronous' | 'databasePoolSize' | 'databaseTimeout'> & Partial<Pick<Config, 'databaseQueueLimit' | 'eventsRetention'>>

/** Opens the store that DATABASE_URL names: `sqlite:<path>`, `sqlite::memory:`, or `postgres://…`. */
/** The database system a DATABASE_URL names, as OpenTelemetry's `db.system.name` writes it. */
export function databaseSystem (databaseUrl: string): 'sqlite' | 'postgresql' {
  return databaseUrl.startsWith('sqlite:') ? 'sqlite' : 'postgresql'
}

export async function openStore (config: StoreConfig, log?: Pick<FastifyBaseLogger, 'info' | 'warn'>, observer?: StoreObserver): Promise<PlantStore> {
  const { databaseUrl } = config
  if (databaseUrl.startsWith('sqlite:')) {
    return openSqliteStore({
      path: databaseUrl.slice('sqlite:'.length),
      synchronous: config.sqliteSynchronous,
      timeout: config.databaseTimeout,
      queueLimit: config.databaseQueueLimit,
      log,
      observer,
      feed: (config.eventsRetention ?? 0) > 0
    })
  }
  /* c8 ignore start - the rest runs only when PostgreSQL is configured (PLANT_STORE_TEST_PG_URL in the tests) */
  if (!/^postgres(ql)?:\/\//.test(databaseUrl)) throw new Error(`DATABASE_URL: no store for ${databaseUrl.split(':')[0]}`)
  // Loaded on demand: a SQLite deployment never loads pg.
  const { openPostgresStore } = await import('./postgres/index.js')
  return openPostgresStore({ url: databaseUrl, poolSize: config.databasePoolSize, timeout: config.databaseTimeout, queueLimit: config.databaseQueueLimit, log, observer, feed: (config.eventsRetention ?? 0) > 0 })
}
/* c8 ignore stop */
