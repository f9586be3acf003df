// @fastify/rate-limit's own Redis store, which its package does not type.
declare module '@fastify/rate-limit/store/RedisStore.js' {
  import type { FastifyRateLimitStore } from '@fastify/rate-limit'
  import type { Redis } from 'ioredis'

  type Callback = Parameters<FastifyRateLimitStore['incr']>[1]
  class RedisStore implements FastifyRateLimitStore {
    constructor (continueExceeding: boolean | undefined, exponentialBackoff: boolean | undefined, redis: Redis, key?: string)
    incr (key: string, callback: Callback, timeWindow: number, max: number): void
    /** Reads without counting: what `{ increment: false }` uses. */
    read (key: string, callback: Callback, timeWindow: number, max: number): void
    child (routeOptions: Parameters<FastifyRateLimitStore['child']>[0]): RedisStore
  }
  export default RedisStore
}
