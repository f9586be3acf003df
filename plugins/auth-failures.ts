import fastifyRateLimit, { type FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import type { FastifyError, FastifyInstance, FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { HttpError } from '../src/errors.js'

export interface AuthFailuresOptions {
  /** Failed authentications an address may make per window; the next requests get a 429. */
  max: number
  /** The window, in ms. */
  timeWindow: number
  /** Called for each request refused with a 429 (metrics). */
  onRefuse?: () => void
  /** Where the counts live (Redis, shared by replicas); in this process's memory when absent. */
  store?: FastifyRateLimitStoreCtor
}

type Limiter = ReturnType<FastifyInstance['createRateLimit']>

/**
 * Counts failed authentications (401) per client address (`request.ip`: behind
 * a proxy, set Fastify's `trustProxy`) and, once an address has made `max` in
 * a window, refuses its requests with a 429 and Retry-After before the token is
 * even looked at, so tokens cannot be guessed at speed. Successful requests
 * are never counted. Register it before auth, in the same scope.
 */
const authFailures: FastifyPluginAsync<AuthFailuresOptions> = async (fastify, { max, timeWindow, onRefuse, store }) => {
  let limiter: Limiter | undefined
  // In a scope of its own, so that it does not meet the per-token limiter's decorators.
  await fastify.register(async (counter) => {
    // A failing store (Redis) must not turn every request into a 500: the check is skipped then.
    await counter.register(fastifyRateLimit, { global: false, max, timeWindow, store, skipOnError: true })
    limiter = counter.createRateLimit()
  })
  const count = limiter as Limiter

  fastify.addHook('onRequest', async (request, reply) => {
    const state = await count(request, { increment: false })
    if (state.isAllowed || state.remaining > 0) return
    onRefuse?.()
    reply.header('retry-after', state.ttlInSeconds).header('connection', 'close')
    throw new HttpError(429, `Too many failed authentications from this address: retry in ${state.ttlInSeconds} s.`)
  })

  // Counted before the 401 is sent, so that a burst of guesses is stopped as soon as it can be.
  fastify.addHook('onError', async (request, _reply, error: FastifyError) => {
    if (error instanceof HttpError && error.statusCode === 401) await count(request)
  })
}

export default fp(authFailures, { name: 'plant-store-auth-failures', fastify: '5.x' })
