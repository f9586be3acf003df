import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import { NewPlant, PLANT_BODY_LIMIT, PlantParams, ref } from '../../schemas/index.js'
import { HttpError } from '../../src/errors.js'
import type { PlantStore, WriteOptions } from '../../src/store/types.js'
// Types the `scope` of a route's config, which the auth plugin checks.
import type {} from '../../src/scopes.js'
import { jsonApiScope } from '../json-api.js'
import { listRoute } from './list.js'
import { badId, error, plantResponse, tags, unavailable } from './responses.js'

export interface PlantsOptions {
  /** Where the plants live. Required. */
  store: PlantStore
  /** Largest accepted JSON body in bytes; the host's bodyLimit when absent. A plant write reads no more than PLANT_BODY_LIMIT either way. */
  bodyLimit?: number
}

function checkOptions (options: Partial<PlantsOptions>): PlantsOptions {
  const { store, bodyLimit } = options
  const methods = ['create', 'delete', 'get', 'list', 'check', 'close'] as const
  if (store === null || typeof store !== 'object' || !methods.every((m) => typeof store[m] === 'function')) {
    throw new TypeError('plants: options.store must be a PlantStore (create, delete, get, list, check, close)')
  }
  if (bodyLimit !== undefined && !(Number.isInteger(bodyLimit) && bodyLimit > 0)) {
    throw new TypeError('plants: options.bodyLimit must be a positive integer')
  }
  return { store, bodyLimit }
}

/**
 * A write of a request whose client has gone (its connection closed) is dropped before it is sent to the store;
 * the request is the write's origin, so that a trace can link the store's batch to the requests it carried.
 */
function writeOf (request: FastifyRequest): WriteOptions {
  return { abandoned: () => request.raw.socket?.destroyed === true, origin: request }
}

/**
 * The plants routes: POST /plants, GET /plants, GET and DELETE /plants/:id. An encapsulated plugin:
 * its schemas, JSON parser, validator and error replies stay in its own scope,
 * so a host keeps its own, and `prefix` places the routes.
 */
const plants: FastifyPluginAsync<PlantsOptions> = async (instance, options) => {
  const { store, bodyLimit } = checkOptions(options)
  const fastify = jsonApiScope(instance)
  // What a plant write reads: sized to the schema, so a larger body is a 413 before it is read.
  // (Fastify's initialConfig always holds a bodyLimit: its default when the host set none.)
  const writeBodyLimit = Math.min(bodyLimit ?? fastify.initialConfig.bodyLimit as number, PLANT_BODY_LIMIT)

  fastify.post('/plants', {
    bodyLimit: writeBodyLimit,
    config: { scope: 'plants:write' },
    schema: {
      summary: 'Create a plant',
      description: 'Adds the plant under the id the client chose. A retry with the same content answers 200 again.',
      operationId: 'addPlant',
      tags,
      body: ref(NewPlant),
      response: {
        200: plantResponse('The plant as stored: created now, or already there with the same content'),
        400: error('The body is not JSON, or breaks the NewPlant schema; the message names the field and the rule'),
        409: error('A different plant already has this id; it was left as it was'),
        413: error('The body is larger than the service accepts'),
        415: error('The body is not application/json, names a charset other than utf-8, or has a Content-Encoding'),
        503: unavailable
      }
    }
  }, async (request) => {
    const { id, name, tag } = request.body
    const { outcome, plant } = await store.create({ id, name, tag }, writeOf(request))
    if (outcome === 'conflict') {
      throw new HttpError(409, `A different plant already has id ${id}; it was left as it was.`)
    }
    return plant
  })

  fastify.get('/plants/:id', {
    config: { scope: 'plants:read' },
    schema: {
      summary: 'Read a plant',
      operationId: 'getPlant',
      tags,
      params: PlantParams,
      response: {
        200: plantResponse('The plant'),
        400: badId,
        404: error('No plant has this id'),
        503: unavailable
      }
    }
  }, async (request) => {
    const plant = await store.get(request.params.id)
    if (plant === undefined) throw new HttpError(404, `No plant has id ${request.params.id}.`)
    return plant
  })

  fastify.delete('/plants/:id', {
    config: { scope: 'plants:write' },
    schema: {
      summary: 'Delete a plant',
      description: 'Removes the plant; its id is then free for a new plant. Of concurrent deletes of one id, one answers 204.',
      operationId: 'deletePlant',
      tags,
      params: PlantParams,
      response: {
        204: { type: 'null', description: 'The plant was deleted' },
        400: badId,
        404: error('No plant has this id (a second delete of one id is a 404)'),
        503: unavailable
      }
    }
  }, async (request, reply) => {
    // Through the same group commit as creates: writes of one id keep their order.
    if (!await store.delete(request.params.id, writeOf(request))) throw new HttpError(404, `No plant has id ${request.params.id}.`)
    return reply.code(204).send()
  })

  listRoute(fastify, store)
}

export default plants
