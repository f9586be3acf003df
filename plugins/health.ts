import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsync } from 'fastify'
import type { PlantStore } from '../src/store/types.js'
import { ErrorBody, RetryAfterHeader, ref } from '../schemas/index.js'

export interface HealthOptions {
  store: PlantStore
}

const Status = Type.Object({ status: Type.Literal('ok') }, { additionalProperties: false })

// Probes arrive every few seconds: their success is not worth a log line.
const logLevel = 'warn'

/** How often, at most, /ready asks the store, in ms. */
export const READY_CHECK_EVERY = 1000

/**
 * The store's check, run at most once every READY_CHECK_EVERY ms whatever the number of
 * callers: those that come while a check runs share it, those that come soon after get
 * its outcome. A flood of unauthenticated probes then costs the store one check a
 * second (a write, for SQLite), not one per probe.
 */
function everySecond (check: () => Promise<void>): () => Promise<void> {
  let last: Promise<void> | undefined
  let started = 0
  let running = false
  return () => {
    const now = performance.now()
    if (last === undefined || (!running && now - started >= READY_CHECK_EVERY)) {
      started = now
      running = true
      last = check().finally(() => { running = false })
    }
    return last
  }
}

const health: FastifyPluginAsync<HealthOptions> = async (fastify, { store }) => {
  if (fastify.getSchema(ErrorBody.$id as string) === undefined) fastify.addSchema(ErrorBody)
  const ready = everySecond(() => store.check())

  fastify.get('/health', {
    logLevel,
    schema: {
      summary: 'Liveness: the process answers',
      operationId: 'health',
      tags: ['probes'],
      security: [],
      response: { 200: { ...Status, description: 'The process answers' } }
    }
  }, async () => ({ status: 'ok' as const }))

  // Ready means the store answers: a load balancer sends traffic elsewhere while it does not.
  // The answer may be up to a second old (everySecond).
  fastify.get('/ready', {
    logLevel,
    schema: {
      summary: 'Readiness: the store answers',
      operationId: 'ready',
      tags: ['probes'],
      security: [],
      response: {
        200: { ...Status, description: 'The service can take requests' },
        503: { ...ref(ErrorBody), description: 'The store cannot be reached', headers: { 'Retry-After': RetryAfterHeader } }
      }
    }
  }, async () => {
    await ready()
    return { status: 'ok' as const }
  })
}

export default health
