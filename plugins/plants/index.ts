// plugins/plants: the plants routes, a plugin any Fastify host can register on its own.

import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { EtagHeader, ConditionalHeaders, NewPlant, PLANT_BODY_LIMIT, PlantParams, ref } from '../../schemas/index.js'
import { HttpError } from '../../src/http/errors.js'
import { plantEtag } from '../../src/store/etag.js'
import type { PlantStore } from '../../src/store/types.js'
// Types the `scope` of a route's config, which the auth plugin checks.
import type {} from '../../src/shared/scopes.js'
import { jsonApiScope } from '../../src/http/json-api.js'
import { validKey } from '../../src/http/cursor.js'
import { listRoute } from './list.js'
import { patchRoute } from './patch.js'
import { conditionsOf, names, readPreconditionFailed, storeConditions, unchanged, withEtag } from './preconditions.js'
import { error, noPlant, plantResponse, tags, unavailable } from './responses.js'
import { writeOf } from './write-options.js'

export { plantEtag } from '../../src/store/etag.js'

/** What the routes ask of a store: a PlantStore fits, and so does an adapter of these alone. */
export type PlantsStore = Pick<PlantStore, 'create' | 'update' | 'delete' | 'get' | 'list' | 'cursorKey'>

export interface PlantsOptions {
  /** Where the plants live. Required. */
  store: PlantsStore
  /** Largest accepted JSON body in bytes; the host's bodyLimit when absent. */
  bodyLimit?: number
}

function checkOptions (options: Partial<PlantsOptions>): PlantsOptions {
  const { store, bodyLimit } = options
  const methods = ['create', 'update', 'delete', 'get', 'list'] as const
  if (store === null || typeof store !== 'object' || !methods.every((m) => typeof store[m] === 'function')) {
    throw new TypeError('plants: options.store must have create, update, delete, get and list (a PlantStore has them)')
  }
  if (!validKey(store.cursorKey)) throw new TypeError('plants: options.store.cursorKey must be a Buffer of 16 bytes or more, the same for every instance')
  if (bodyLimit !== undefined && !(Number.isInteger(bodyLimit) && bodyLimit > 0)) {
    throw new TypeError('plants: options.bodyLimit must be a positive integer')
  }
  return { store, bodyLimit }
}

/** The plants routes: POST /plants, GET /plants, GET, PATCH and DELETE /plants/:id. */
const plants: FastifyPluginAsync<PlantsOptions> = async (instance, options) => {
  const { store, bodyLimit } = checkOptions(options)
  const fastify = jsonApiScope(instance)
  // What a plant write reads: sized to the schema, so a larger body is a 413 before it is read.
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
  }, async (request, reply) => {
    const { id, name, tag } = request.body
    const { outcome, plant } = await store.create({ id, name, tag }, writeOf(request))
    if (outcome === 'conflict') {
      throw new HttpError(409, `A different plant already has id ${id}; it was left as it was.`)
    }
    return withEtag(reply, plant)
  })

  fastify.get('/plants/:id', {
    config: { scope: 'plants:read' },
    schema: {
      summary: 'Read a plant',
      description: 'With If-None-Match naming its current ETag, the answer is a 304 with no body: the copy the client holds is current. ' +
        'With If-Match naming no current ETag, a 412.',
      operationId: 'getPlant',
      tags,
      params: PlantParams,
      headers: ConditionalHeaders,
      response: {
        200: plantResponse('The plant'),
        304: { type: 'null', description: 'Not modified: the plant\'s ETag is one If-None-Match names', headers: { ETag: EtagHeader } },
        400: error('The id is not a signed 64-bit integer in plain decimal digits, or If-Match or If-None-Match is not a list of entity tags'),
        404: error('No plant has this id'),
        412: error('If-Match names no current ETag of the plant (it has changed, or is gone)'),
        503: unavailable
      }
    }
  }, async (request, reply) => {
    const { id } = request.params
    const { ifMatch, ifNoneMatch } = conditionsOf(request)
    const plant = await store.get(id)
    const etag = plant === undefined ? undefined : plantEtag(plant)
    // RFC 9110 §13.2.2: If-Match is evaluated first, and fails when there is no plant.
    if (ifMatch !== undefined && !names(ifMatch, etag)) throw readPreconditionFailed(id)
    if (plant === undefined) throw noPlant(id)
    reply.header('etag', `"${etag}"`)
    return ifNoneMatch !== undefined && names(ifNoneMatch, etag) ? reply.code(304).send() : plant
  })

  fastify.delete('/plants/:id', {
    config: { scope: 'plants:write' },
    schema: {
      summary: 'Delete a plant',
      description: 'Removes the plant; its id is then free for a new plant. Of concurrent deletes of one id, one answers 204. ' +
        'With If-Match, only the plant as the client read it is deleted; with If-None-Match, only a plant it does not name.',
      operationId: 'deletePlant',
      tags,
      params: PlantParams,
      headers: ConditionalHeaders,
      response: {
        204: { type: 'null', description: 'The plant was deleted' },
        400: error('The id is not a signed 64-bit integer in plain decimal digits, or If-Match or If-None-Match is not a list of entity tags'),
        404: error('No plant has this id (a second delete of one id is a 404)'),
        412: error('If-Match names no current ETag of the plant (it has changed, or is gone), or If-None-Match names its current ETag (or is * and it exists): nothing was deleted'),
        503: unavailable
      }
    }
  }, async (request, reply) => {
    const { id } = request.params
    const conditions = conditionsOf(request)
    // Through the same group commit as creates: writes of one id keep their order.
    const deleted = await store.delete(id, { ...writeOf(request), ...await storeConditions(store, id, conditions) })
    if (deleted !== true) throw unchanged(id, conditions, deleted === 'refused')
    return reply.code(204).send()
  })

  patchRoute(fastify, store, writeBodyLimit)
  listRoute(fastify, store)
}

export default fp(plants, { name: 'plant-store-plants', fastify: '5.x', encapsulate: true })
