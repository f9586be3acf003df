import fastifyRateLimit from '@fastify/rate-limit'
import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { HttpError } from '../src/http/errors.js'
import type { SharedCounts } from '../src/http/shared-limits.js'

export interface RateLimitOptions {
  /** Requests each token may make per window; undefined turns the limit off. */
  max?: number
  /** The window, in ms. */
  timeWindow: number
  /** Called for each request refused with a 429 (metrics). */
  onRefuse?: () => void
  /** Counts in Redis, shared by replicas; in this process's memory when absent. */
  shared?: SharedCounts
}

/** Limits each client of the scope it is registered in to `max` requests per window. */
const rateLimit: FastifyPluginAsync<RateLimitOptions> = async (fastify, { max, timeWindow, onRefuse, shared }) => {
  if (max === undefined) return
  await fastify.register(fastifyRateLimit, {
    max,
    timeWindow,
    redis: shared?.redis,
    nameSpace: shared?.nameSpace,
    // A store that fails (Redis unreachable) lets the request through rather than fail it.
    skipOnError: true,
    keyGenerator: (request) => request.tokenFingerprint as string,
    // Every request the limit lets through, a check Redis could not make among them.
    onExceeding: shared?.checked,
    onExceeded: onRefuse,
    errorResponseBuilder: (_request, context) =>
      new HttpError(429, `Too many requests with this token: the limit is ${context.max} per ${timeWindow / 1000} s; retry in ${context.after}.`)
  })
}

export default fp(rateLimit, { name: 'plant-store-rate-limit', fastify: '5.x', dependencies: ['plant-store-auth'] })
