import type { FastifyBaseLogger } from 'fastify'
import type { StoreObserver } from './observer.js'

/** The name this package's users have known for what a store needs of Fastify's (or pino's) logger. */
export type StoreLogger = Pick<FastifyBaseLogger, 'info' | 'warn'>

/** What an operation did: a write (or a probe that writes) or only a read. */
export type Access = 'read' | 'write'

export interface Outage {
  /** The store failed to answer: logged when an outage starts, not at every failure. */
  down (access: Access, reason: string, code?: string): void
  /** The store answered: logged when an outage ends. */
  up (access: Access): void
  /** Whether the last write failed and none has succeeded since: the store is not ready. */
  writesFailing (): boolean
  /** How many times the store has turned unavailable or available again so far. */
  changes (): number
}

/** Tracks whether a store answers, so an outage is logged once when it starts and once when it ends. */
export function trackOutage (log: Pick<FastifyBaseLogger, 'info' | 'warn'>, store: string, observer?: StoreObserver): Outage {
  let available = true
  let writesFailed = false
  let changes = 0
  return {
    down (access, reason, code) {
      if (access === 'write') writesFailed = true
      if (!available) return
      available = false
      changes++
      observer?.available?.(false)
      log.warn({ reason, code }, `${store} is unavailable: requests get 503 until it answers again`)
    },
    up (access) {
      if (available || (writesFailed && access === 'read')) return
      available = true
      writesFailed = false
      changes++
      observer?.available?.(true)
      log.info({}, `${store} answers again`)
    },
    writesFailing () {
      return writesFailed
    },
    changes () {
      return changes
    }
  }
}

const ignore = (): void => {}
export const SILENT: Pick<FastifyBaseLogger, 'info' | 'warn'> = { info: ignore, warn: ignore }
