import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { ConditionalHeaders, PlantParams, PlantPatch, ref } from '../../schemas/index.js'
import type { PlantStore } from '../../src/store/types.js'
import { acceptMergePatches } from '../../src/http/json-body.js'
import { conditionsOf, storeConditions, unchanged, withEtag } from './preconditions.js'
import { error, plantResponse, tags, unavailable } from './responses.js'
import { writeOf } from './write-options.js'

/** PATCH /plants/:id: a JSON merge patch of the plant. */
export function patchRoute (instance: FastifyInstance, store: Pick<PlantStore, 'update' | 'get'>, bodyLimit: number | undefined): void {
  // A scope of its own: this route alone takes merge patches (a create sent as one is a 415).
  instance.register(async function mergePatches (scope) {
    acceptMergePatches(scope)
    scope.withTypeProvider<TypeBoxTypeProvider>().patch('/plants/:id', {
      bodyLimit,
      config: { scope: 'plants:write' },
      schema: {
        summary: 'Change a plant',
        description: 'Applies a JSON merge patch (RFC 7396): `{"name":"Fern"}` renames the plant, `{"tag":"shade"}` sets its tag, `{"tag":null}` removes it. ' +
          'A patch that changes nothing writes nothing. With If-Match, the change is made only to the plant as the client read it: ' +
          'of concurrent changes made against one ETag, one succeeds and the others get 412. With If-None-Match, only a plant it does not name is changed.',
        operationId: 'updatePlant',
        tags,
        consumes: ['application/merge-patch+json', 'application/json'],
        params: PlantParams,
        headers: ConditionalHeaders,
        body: ref(PlantPatch),
        response: {
          200: plantResponse('The plant as it now is'),
          400: error('The id is not a signed 64-bit integer, If-Match or If-None-Match is not a list of entity tags, or the body is not JSON or breaks the PlantPatch schema (an id, a null name); the message names the field and the rule'),
          404: error('No plant has this id'),
          412: error('If-Match names no current ETag of the plant (it has changed, or is gone), or If-None-Match names its current ETag (or is * and it exists): nothing was changed'),
          413: error('The body is larger than the service accepts'),
          415: error('The body is neither application/merge-patch+json nor application/json, names a charset other than utf-8, or has a Content-Encoding'),
          503: unavailable
        }
      }
    }, async (request, reply) => {
      const { id } = request.params
      const { name, tag } = request.body
      const conditions = conditionsOf(request)
      const result = await store.update(id, { name, tag }, { ...writeOf(request), ...await storeConditions(store, id, conditions) })
      if (result === undefined || result.outcome === 'refused') throw unchanged(id, conditions, result !== undefined)
      return withEtag(reply, result.plant)
    })
  })
}
