import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { build, sqliteUrl } from './build.js'

export type Build = (t: Test, env?: Record<string, string>) => Promise<FastifyInstance>

interface StoreKind {
  name: string
  skip?: string
  /** A database of the test's own, removed when the test ends. */
  databaseUrl: (t: Test) => Promise<string>
}

const PG_URL = process.env.PLANT_STORE_TEST_PG_URL

const kinds: StoreKind[] = [
  { name: 'sqlite', databaseUrl: async (t) => sqliteUrl(t) },
  {
    name: 'postgres',
    skip: PG_URL === undefined || PG_URL === '' ? 'PostgreSQL: PLANT_STORE_TEST_PG_URL is not set' : undefined,
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
