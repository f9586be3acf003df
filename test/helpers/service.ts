import { join } from 'node:path'
import type { Test } from 'tap'
import Database from 'better-sqlite3'
import { connect, freshPostgresUrl } from './postgres.js'
import { startServer, type RunningServer } from './server.js'

export const TOKEN = 'client-test-token'

export type StoreName = 'sqlite' | 'postgres'

export interface Service {
  url: string
  /** The store it runs on, for the test to reach behind its back. */
  databaseUrl: string
  server: RunningServer
}

/** The service as its own process (src/server.ts), on a fresh database of the test's own. */
export async function startService (t: Test, store: StoreName, env: Record<string, string> = {}): Promise<Service> {
  const databaseUrl = store === 'sqlite' ? `sqlite:${join(t.testdir(), 'plants.db')}` : await freshPostgresUrl(t) as string
  // No load shedding unless a test asks for it: on a busy machine its 503s would
  // turn the counts of requests these tests make into a test of load shedding.
  const server = await startServer(t, { API_TOKENS: TOKEN, DATABASE_URL: databaseUrl, MAX_EVENT_LOOP_DELAY: '0', ...env })
  return { url: server.url, databaseUrl, server }
}

export interface Exchange {
  method: string
  url: string
  /** When fetch was called, and when its answer was read (performance.now()). */
  sent: number
  answered?: number
  status?: number
  retryAfter?: string | null
}

/** The real fetch, with a record of every exchange: what the client sent, when, and what came back. */
export function recordingFetch (): { fetch: typeof fetch, exchanges: Exchange[] } {
  const exchanges: Exchange[] = []
  const recording: typeof fetch = async (input, init) => {
    const exchange: Exchange = { method: init?.method ?? 'GET', url: String(input), sent: performance.now() }
    exchanges.push(exchange)
    const response = await fetch(input, init)
    Object.assign(exchange, { answered: performance.now(), status: response.status, retryAfter: response.headers.get('retry-after') })
    return response
  }
  return { fetch: recording, exchanges }
}

/**
 * Pauses the service's store from outside, as another process would: SQLite's
 * write lock (the service's writes wait, then answer 503) or an exclusive lock
 * on PostgreSQL's plants table (reads and writes wait, then 503). Resolves to
 * the function that lets go.
 */
export async function pauseStore (t: Test, service: Service): Promise<() => Promise<void>> {
  if (service.databaseUrl.startsWith('sqlite:')) {
    const other = new Database(service.databaseUrl.slice('sqlite:'.length))
    t.teardown(() => other.close())
    other.exec('BEGIN IMMEDIATE')
    return async () => { other.exec('ROLLBACK') }
  }
  const holder = await connect(t, service.databaseUrl)
  await holder.query('BEGIN')
  await holder.query('LOCK TABLE plants IN ACCESS EXCLUSIVE MODE')
  return async () => { await holder.query('ROLLBACK') }
}
