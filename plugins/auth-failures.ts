// plugins/: the service's Fastify plugins, one concern each; plants/ and webhooks/ hold the
// API's routes. A plugin imports the layers in src/ and schemas/, never a sibling plugin.

import fastifyRateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { HttpError } from '../src/http/errors.js'
import type { SharedCounts } from '../src/http/shared-limits.js'

export interface AuthFailuresOptions {
  /** Failed authentications an address may make per window; its next failures get a 429. */
  max: number
  /** The window, in ms. */
  timeWindow: number
  /** Called for each request refused with a 429 (metrics). */
  onRefuse?: () => void
  /** Counts in Redis, shared by replicas; in this process's memory when absent. */
  shared?: SharedCounts
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Counts a failed authentication of the request's address. */
    countAuthFailure?: (request: FastifyRequest, reply: FastifyReply) => Promise<HttpError | undefined>
  }
}

type Limiter = ReturnType<FastifyInstance['createRateLimit']>

/**
 * Limits failed authentications per client address (`request.ip`: behind a proxy, set Fastify's
 * `trustProxy`).
 */
const authFailures: FastifyPluginAsync<AuthFailuresOptions> = async (fastify, { max, timeWindow, onRefuse, shared }) => {
  let limiter: Limiter | undefined
  // In a scope of its own, so that it does not meet the per-token limiter's decorators.
  await fastify.register(async (counter) => {
    // A failing store (Redis) must not turn every failure into a 500: the count is skipped then.
    await counter.register(fastifyRateLimit, { global: false, max, timeWindow, redis: shared?.redis, nameSpace: shared?.nameSpace, skipOnError: true })
    limiter = counter.createRateLimit()
  })
  const count = limiter as Limiter

  fastify.decorate('countAuthFailure', async (request: FastifyRequest, reply: FastifyReply) => {
    const state = await count(request)
    shared?.checked()
    if (state.isAllowed || state.isExceeded !== true) return undefined
    onRefuse?.()
    reply.header('retry-after', state.ttlInSeconds)
    return new HttpError(429, `Too many failed authentications from this address: retry in ${state.ttlInSeconds} s.`)
  })
}

export default fp(authFailures, { name: 'plant-store-auth-failures', fastify: '5.x' })
