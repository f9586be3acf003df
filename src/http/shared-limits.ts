import { once } from 'node:events'
import { Redis } from 'ioredis'
import type { FastifyBaseLogger } from 'fastify'

/** What the shared limits tell metrics: Redis answering or not, and each check it could not make. */
export interface SharedLimitsObserver {
  available (up: boolean): void
  failed (): void
}

/** One limit's counts in Redis: what @fastify/rate-limit takes as its `redis` and `nameSpace` options. */
export interface SharedCounts {
  redis: Redis
  /** Where this limit's keys are, after REDIS_KEY_PREFIX. */
  nameSpace: string
  /** Called after each check: one made while Redis does not answer let its request through, and is counted. */
  checked: () => void
}

export interface SharedLimits {
  /** The counts of one limit, its keys under `name` (after the key prefix). */
  counts (name: string): SharedCounts
  close (): Promise<void>
}

export interface SharedLimitsOptions {
  url: string
  keyPrefix: string
  log: Pick<FastifyBaseLogger, 'info' | 'warn'>
  observer?: SharedLimitsObserver
}

// A check that Redis cannot answer this fast lets the request through (fail open).
const COMMAND_TIMEOUT = 500

/** Limits counted in one Redis for every replica, by @fastify/rate-limit's own Redis store. */
export async function connectSharedLimits ({ url, keyPrefix, log, observer }: SharedLimitsOptions): Promise<SharedLimits> {
  const redis = new Redis(url, {
    keyPrefix,
    // Fail at once while disconnected, rather than queue checks until Redis returns.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT,
    // A Redis that holds a connection without answering is dropped.
    socketTimeout: COMMAND_TIMEOUT,
    connectTimeout: 2000,
    // Reconnect for as long as the service runs, at most every two seconds.
    retryStrategy: (times) => Math.min(times * 200, 2000)
  })

  let available = true
  let closing = false
  const down = (reason: string): void => {
    if (!available || closing) return
    available = false
    observer?.available(false)
    log.warn({ reason }, 'Redis is unavailable: rate limits are not enforced until it answers again')
  }
  // Without an 'error' listener, ioredis would print every connection error itself.
  redis.on('error', (error: Error) => down(error.message))
  redis.on('close', () => down('the connection closed'))
  redis.on('ready', () => {
    if (available) return
    available = true
    observer?.available(true)
    log.info({}, 'Redis answers again: rate limits are shared and enforced')
  })
  // once() rejects at the first 'error': the first attempt failed, and the service starts unlimited.
  await once(redis, 'ready').catch(() => {})

  return {
    counts: (name) => ({
      redis,
      nameSpace: name,
      checked: () => {
        if (!available) observer?.failed()
      }
    }),
    async close () {
      closing = true
      redis.disconnect()
    }
  }
}
