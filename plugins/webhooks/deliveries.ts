import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { DeliveryListQuery, DeliveryParams, MAX_PAGE, ref, WebhookDelivery, WebhookParams } from '../../schemas/index.js'
import { HttpError } from '../../src/http/errors.js'
import type { WebhookStore } from '../../src/store/webhook-types.js'
import { timeCursors } from '../../src/http/cursor.js'
import { refuseRepeated } from '../../src/http/refuse-repeated.js'
import { error, unavailable } from '../../src/http/responses.js'
import { badId, config, notFound, storableId, tags } from './responses.js'

/** GET /webhooks/:id/deliveries, newest first a page at a time, and POST …/:deliveryId/retry. */
export function deliveryRoutes (instance: FastifyInstance, store: WebhookStore): void {
  const fastify = instance.withTypeProvider<TypeBoxTypeProvider>()
  // A deliveries cursor is sealed to its endpoint's listing, so that it serves no other.
  const pages = timeCursors(store.cursorKey, 2)

  fastify.get('/webhooks/:id/deliveries', {
    config,
    preValidation: refuseRepeated,
    schema: {
      summary: 'List an endpoint\'s deliveries',
      description: 'Newest first, a page at a time, each with its attempts. While more follow, the `Link` header gives ' +
        'the next page (`rel="next"`); the last page has none. Succeeded deliveries are kept for `WEBHOOK_RETENTION`.',
      operationId: 'listWebhookDeliveries',
      tags,
      params: WebhookParams,
      querystring: DeliveryListQuery,
      response: {
        200: Type.Array(ref(WebhookDelivery), {
          maxItems: MAX_PAGE,
          description: 'A page of deliveries; `[]` when there are none',
          headers: {
            Link: Type.String({ maxLength: 1024, pattern: '^<[^>]*>; rel="next"$', description: 'Present while more deliveries follow: `<…>; rel="next"`, a reference to the next page relative to this one' })
          }
        }),
        400: error('A query parameter is out of range, not a plain decimal, repeated or unknown, or the cursor was altered'),
        404: notFound,
        503: unavailable
      }
    }
  }, async (request, reply) => {
    const { id } = request.params
    const { cursor } = request.query
    // Optional in the document; the schema's default fills it in.
    const limit = request.query.limit as number
    const before = cursor === undefined ? undefined : pages.read(`webhook ${id}`, cursor)
    // One more than the page: whether a next page exists is known without a count.
    const page = await store.listDeliveries(id, { limit: limit + 1, before })
    if (page === undefined) throw new HttpError(404, 'No webhook endpoint has this id.')
    if (page.length > limit) {
      page.length = limit
      // The request's own path, prefix included: the reference resolves against the request URL.
      const path = request.url.split('?')[0]
      reply.header('link', `<${path}?limit=${limit}&cursor=${pages.write(`webhook ${id}`, page[limit - 1])}>; rel="next"`)
    }
    return page
  })

  fastify.post('/webhooks/:id/deliveries/:deliveryId/retry', {
    config,
    schema: {
      summary: 'Retry a delivery',
      description: 'Makes one more attempt now, whatever the delivery\'s status, with the same `webhook-id`. ' +
        'The endpoint must be enabled.',
      operationId: 'retryWebhookDelivery',
      tags,
      params: DeliveryParams,
      response: {
        202: { type: 'null', description: 'The attempt is due now' },
        400: badId,
        404: error('No webhook endpoint has this id, or it has no delivery with this id'),
        409: error('The endpoint is disabled: enable it first'),
        503: unavailable
      }
    }
  }, async (request, reply) => {
    const { id, deliveryId } = request.params
    const endpoint = await store.getEndpoint(id)
    if (endpoint === undefined) throw new HttpError(404, 'No webhook endpoint has this id.')
    if (!endpoint.enabled) {
      throw new HttpError(409, 'The endpoint is disabled: enable it (PATCH with "enabled": true), then retry the delivery.')
    }
    if (!storableId(deliveryId) || !await store.retryDelivery(id, deliveryId)) throw new HttpError(404, 'This endpoint has no delivery with this id.')
    return reply.code(202).send()
  })
}
