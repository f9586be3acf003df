import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsync } from 'fastify'
import type { PlantStore } from '../src/store/types.js'
import { ErrorBody } from '../schemas/error.js'

export interface HealthOptions {
  store: PlantStore
}

const Status = Type.Object({ status: Type.Literal('ok') }, { additionalProperties: false })

const health: FastifyPluginAsync<HealthOptions> = async (fastify, { store }) => {
  fastify.get('/health', {
    schema: { response: { 200: Status } }
  }, async () => ({ status: 'ok' as const }))

  // Ready means the store answers: a load balancer sends traffic elsewhere while it does not.
  fastify.get('/ready', {
    schema: { response: { 200: Status, 503: ErrorBody } }
  }, async () => {
    await store.check()
    return { status: 'ok' as const }
  })
}

export default health
