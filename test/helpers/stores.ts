import Database from 'better-sqlite3'
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { openStore, type PlantStore } from '../../src/store/index.js'
import { build, sqliteUrl } from './build.js'
import { PG_SKIP } from './requires.js'

export type Build = (t: Test, env?: Record<string, string>) => Promise<FastifyInstance>

interface StoreKind {
  name: string
  skip?: string
  /** A database of the test's own, removed when the test ends. */
  databaseUrl: (t: Test) => Promise<string>
}

const kinds: StoreKind[] = [
  { name: 'sqlite', databaseUrl: async (t) => sqliteUrl(t) },
  {
    name: 'postgres',
    skip: PG_SKIP,
    databaseUrl: async (t) => {
      const { freshPostgresUrl } = await import('./postgres.js')
      return await freshPostgresUrl(t) as string
    }
  }
]

/**
 * Runs one suite against every store: the contract is the same for all.
 * `build` gives each call a fresh database; `databaseUrl` lets a test reopen one.
 */
export function forEachStore (t: Test, suite: (t: Test, build: Build, databaseUrl: (t: Test) => Promise<string>) => void): void {
  for (const kind of kinds) {
    t.test(kind.name, { skip: kind.skip }, async (t) => {
      suite(t, async (t, env = {}) => build(t, { DATABASE_URL: await kind.databaseUrl(t), ...env }), kind.databaseUrl)
    })
  }
}

/** Opens the store at `databaseUrl` as the app does, closed when the test ends. */
export async function openTestStore (t: Test, databaseUrl: string): Promise<PlantStore> {
  const store = await openStore({ databaseUrl, sqliteSynchronous: 'normal', databasePoolSize: 4, databaseTimeout: 5000 })
  t.teardown(() => store.close())
  return store
}

export type Sql = (text: string, values?: unknown[]) => Promise<Array<Record<string, unknown>>>

/**
 * A connection of the test's own to the database behind a store, to look at its rows:
 * `?` placeholders on either engine; integers as BigInt on SQLite and text on PostgreSQL.
 */
export async function rawSql (t: Test, databaseUrl: string): Promise<Sql> {
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new Database(databaseUrl.slice('sqlite:'.length))
    t.teardown(() => db.close())
    return async (text, values = []) => {
      const statement = db.prepare(text)
      if (!statement.reader) {
        statement.run(...values)
        return []
      }
      return statement.safeIntegers(true).all(...values) as Array<Record<string, unknown>>
    }
  }
  const { connect } = await import('./postgres.js')
  const client = await connect(t, databaseUrl)
  return async (text, values = []) => {
    let n = 0
    return (await client.query(text.replace(/\?/g, () => `$${++n}`), values)).rows
  }
}

/** Expands every event committed so far into its deliveries, as the sender does, step by step. */
export async function expandAll (store: PlantStore, step = 500): Promise<number> {
  let total = 0
  for (let more = true; more;) {
    const expansion = await store.webhooks.expand(step)
    total += expansion.deliveries
    more = expansion.more
  }
  return total
}

/**
 * The store, its changes followed at once by the expansion of their events (what the sender
 * does in the background): for the tests of what comes after, claims, outcomes and listings.
 */
export function expandingStore (store: PlantStore): PlantStore {
  // One expansion at a time; the changes that end while one runs share the next.
  let running: Promise<unknown> = Promise.resolve()
  let next: Promise<unknown> | undefined
  const expanded = (): Promise<unknown> => {
    next ??= running.catch(() => {}).then(() => {
      next = undefined
      running = expandAll(store)
      return running
    })
    return next
  }
  const then = async <T>(result: T): Promise<T> => {
    await expanded()
    return result
  }
  return Object.assign(Object.create(store) as PlantStore, {
    create: (...args: Parameters<PlantStore['create']>) => store.create(...args).then(then),
    update: (...args: Parameters<PlantStore['update']>) => store.update(...args).then(then),
    delete: (...args: Parameters<PlantStore['delete']>) => store.delete(...args).then(then)
  })
}
