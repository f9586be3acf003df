import underPressure from '@fastify/under-pressure'
import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { HttpError } from '../src/errors.js'

export interface LoadSheddingOptions {
  /** Mean event loop delay, in ms, above which requests are refused; 0 turns shedding off. */
  maxEventLoopDelay: number
}

/** Seconds a shed client is told to wait (the Retry-After header). */
export const RETRY_AFTER = 10

class Overloaded extends HttpError {
  constructor () {
    super(503, `The service is overloaded right now; retry in ${RETRY_AFTER} seconds.`)
  }
}

/**
 * Refuses the requests of the scope it is registered in with a 503 and
 * Retry-After while the event loop is saturated, rather than queuing them
 * without bound and answering every one too late.
 */
const loadShedding: FastifyPluginAsync<LoadSheddingOptions> = async (fastify, { maxEventLoopDelay }) => {
  await fastify.register(underPressure, { maxEventLoopDelay, retryAfter: RETRY_AFTER, customError: Overloaded })
}

export default fp(loadShedding, { name: 'plant-store-load-shedding', fastify: '5.x' })
