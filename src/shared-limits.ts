// The Redis store's types, which @fastify/rate-limit does not ship; referenced here so that
// a loader compiling this file alone (the tests' spawned servers) finds them too.
/// <reference path="./rate-limit-store.d.ts" />
import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
// The plugin's own Redis store (its Lua scripts), wrapped below so that failures are seen.
import RedisStore from '@fastify/rate-limit/store/RedisStore.js'
import { once } from 'node:events'
import { Redis } from 'ioredis'
import type { StoreLogger } from './store/outage.js'

/** What the shared limits tell metrics: Redis answering or not, and each check it could not make. */
export interface SharedLimitsObserver {
  available (up: boolean): void
  failed (): void
}

export interface SharedLimits {
  /** A @fastify/rate-limit store for one limit, its keys under `name` (after the key prefix). */
  store (name: string): FastifyRateLimitStoreCtor
  close (): Promise<void>
}

export interface SharedLimitsOptions {
  url: string
  keyPrefix: string
  log: StoreLogger
  observer?: SharedLimitsObserver
}

// A check that Redis cannot answer this fast lets the request through (fail open):
// a limit must never hold requests up for longer than this.
const COMMAND_TIMEOUT = 500

/**
 * Limits counted in one Redis for every replica. When Redis cannot be reached
 * the service keeps serving, unlimited (the plugins run with skipOnError): a
 * limit is a guard against abuse, not a reason to refuse every client. That is
 * logged once when it starts and once when Redis answers again. Resolves once
 * connected, or once the first attempt has failed: the service starts either way.
 */
export async function connectSharedLimits ({ url, keyPrefix, log, observer }: SharedLimitsOptions): Promise<SharedLimits> {
  const redis = new Redis(url, {
    keyPrefix,
    // Fail at once while disconnected, rather than queue checks until Redis returns.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT,
    connectTimeout: 2000,
    // Reconnect for as long as the service runs, at most every two seconds.
    retryStrategy: (times) => Math.min(times * 200, 2000)
  })

  let available = true
  const down = (error: Error): void => {
    if (!available) return
    available = false
    observer?.available(false)
    log.warn({ reason: error.message }, 'Redis is unavailable: rate limits are not enforced until it answers again')
  }
  const up = (): void => {
    if (available) return
    available = true
    observer?.available(true)
    log.info({}, 'Redis answers again: rate limits are shared and enforced')
  }
  // Without a listener, ioredis would print every connection error itself.
  redis.on('error', down)
  redis.on('ready', up)
  // once() rejects at the first 'error': the first attempt failed, and the service starts unlimited.
  await once(redis, 'ready').catch(() => {})

  type Callback = Parameters<FastifyRateLimitStore['incr']>[1]
  const watch = (callback: Callback): Callback => (error, result) => {
    if (error === null) {
      up()
    } else {
      observer?.failed()
      down(error)
    }
    callback(error, result)
  }
  // The plugin's store, with each answer (or failure) seen on its way back.
  function observed (inner: RedisStore): FastifyRateLimitStore {
    return {
      incr: (key, callback, timeWindow, max) => inner.incr(key, watch(callback), timeWindow, max),
      child: (routeOptions) => observed(inner.child(routeOptions))
    } as FastifyRateLimitStore
  }

  return {
    store (name) {
      // @fastify/rate-limit calls `new` on it with its options: an object returned from a constructor stands.
      return function SharedStore (options: { continueExceeding?: boolean, exponentialBackoff?: boolean }) {
        return observed(new RedisStore(options.continueExceeding, options.exponentialBackoff, redis, name))
      } as unknown as FastifyRateLimitStoreCtor
    },

    async close () {
      redis.disconnect()
    }
  }
}
