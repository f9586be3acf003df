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

const health: FastifyPluginAsync<HealthOptions> = async (fastify, { store }) => {
  if (fastify.getSchema(ErrorBody.$id as string) === undefined) fastify.addSchema(ErrorBody)

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
    await store.check()
    return { status: 'ok' as const }
  })
}

export default health
