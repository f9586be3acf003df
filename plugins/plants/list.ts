import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { LinkHeader, MAX_PAGE, PlantListItem, PlantListQuery, ref } from '../../schemas/index.js'
import type { PlantStore } from '../../src/store/types.js'
import { plantCursors } from '../../src/http/cursor.js'
import { refuseRepeated } from '../../src/http/refuse-repeated.js'
import { error, tags, unavailable } from './responses.js'

/** GET /plants: a page of plants in id order, by key, with an RFC 8288 `next` link while more follow. */
export function listRoute (instance: FastifyInstance, store: Pick<PlantStore, 'list' | 'cursorKey'>): void {
  const fastify = instance.withTypeProvider<TypeBoxTypeProvider>()
  const cursors = plantCursors(store.cursorKey)
  fastify.get('/plants', {
    config: { scope: 'plants:read' },
    preValidation: refuseRepeated,
    schema: {
      summary: 'List plants',
      description: 'Plants in ascending id order (negative ids first), a page at a time. While more plants follow, ' +
        'the `Link` header gives the next page (`rel="next"`); the last page has none.',
      operationId: 'listPlants',
      tags,
      querystring: PlantListQuery,
      response: {
        200: Type.Array(ref(PlantListItem), {
          maxItems: MAX_PAGE,
          description: 'A page of plants; `[]` when none match',
          headers: { Link: LinkHeader }
        }),
        400: error('A query parameter is out of range, not a plain decimal, repeated or unknown, or the cursor was altered'),
        503: unavailable
      }
    }
  }, async (request, reply) => {
    const { tag, cursor } = request.query
    // Never undefined here: the schema's default fills it in when the client leaves it out.
    const limit = request.query.limit as number
    const after = cursor === undefined ? undefined : cursors.read(cursor, tag)
    // One more than the page: whether a next page exists is known without a count.
    const page = await store.list({ limit: limit + 1, tag, after })
    if (page.length > limit) {
      page.length = limit
      const query = `limit=${limit}${tag === undefined ? '' : `&tag=${encodeURIComponent(tag)}`}&cursor=${cursors.write(page[limit - 1].id, tag)}`
      // The route's own path, prefix included: the reference resolves against the request URL.
      reply.header('link', `<${request.routeOptions.url}?${query}>; rel="next"`)
    }
    return page
  })
}
