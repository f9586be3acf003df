// plugins/webhooks: the webhook subscriptions' routes and their deliveries' history.

import type { FastifyPluginAsync } from 'fastify'
import { Type } from '@sinclair/typebox'
import { CreatedWebhookEndpoint, LinkHeader, MAX_PAGE, NewWebhookEndpoint, ref, WebhookEndpoint, WebhookEndpointPatch, WebhookListQuery, WebhookParams, WebhookSecret } from '../../schemas/index.js'
import { HttpError } from '../../src/http/errors.js'
import { EndpointLimitError, type WebhookStore } from '../../src/store/webhook-types.js'
import { makeSecret } from '../../src/webhooks/signing.js'
import { checkEndpointUrl } from '../../src/webhooks/url.js'
import { jsonApiScope } from '../../src/http/json-api.js'
import { timeCursors, validKey } from '../../src/http/cursor.js'
import { refuseRepeated } from '../../src/http/refuse-repeated.js'
import { error, unavailable } from '../../src/http/responses.js'
import { deliveryRoutes } from './deliveries.js'
import { badId, config, notFound, storableId, tags } from './responses.js'

export interface WebhooksOptions {
  /** Where the subscriptions and their deliveries live. Required. */
  store: WebhookStore
  /** Whether an endpoint URL may name a loopback or private address (WEBHOOK_ALLOW_PRIVATE). */
  allowPrivate?: boolean
  /** The most endpoints the store keeps (WEBHOOK_ENDPOINT_LIMIT). */
  endpointLimit?: number
}

// How long a rotated-out secret keeps signing beside the new one.
const OVERLAP_MS = 24 * 60 * 60 * 1000

function checkOptions (options: Partial<WebhooksOptions>): Required<WebhooksOptions> {
  const { store, allowPrivate = false, endpointLimit = 100 } = options
  const methods = ['createEndpoint', 'listEndpoints', 'getEndpoint', 'updateEndpoint', 'deleteEndpoint', 'rotateSecret', 'listDeliveries', 'retryDelivery'] as const
  if (store === null || typeof store !== 'object' || !methods.every((m) => typeof store[m] === 'function')) {
    throw new TypeError('webhooks: options.store must be a WebhookStore')
  }
  if (!validKey(store.cursorKey)) throw new TypeError('webhooks: options.store.cursorKey must be a Buffer of 16 bytes or more, the same for every instance')
  if (typeof allowPrivate !== 'boolean') throw new TypeError('webhooks: options.allowPrivate must be a boolean')
  if (!(Number.isSafeInteger(endpointLimit) && endpointLimit > 0)) throw new TypeError('webhooks: options.endpointLimit must be a positive integer')
  return { store, allowPrivate, endpointLimit }
}

/** The webhook subscriptions: /webhooks and its deliveries. */
const webhooks: FastifyPluginAsync<WebhooksOptions> = async (instance, options) => {
  const { store, allowPrivate, endpointLimit } = checkOptions(options)
  const fastify = jsonApiScope(instance)
  const pages = timeCursors(store.cursorKey, 3)

  function checkUrl (url: string | undefined): void {
    const wrong = url === undefined ? undefined : checkEndpointUrl(url, allowPrivate)
    if (wrong !== undefined) throw new HttpError(400, `body/url ${wrong}`)
  }

  // An endpoint id that no store can hold names no endpoint: 404 before the store is asked.
  fastify.addHook('preHandler', async (request) => {
    const { id } = request.params as { id?: string }
    if (id !== undefined && !storableId(id)) throw new HttpError(404, 'No webhook endpoint has this id.')
  })

  const endpoint = (description: string) => ({ ...ref(WebhookEndpoint), description })
  const badBody = error('The body is not JSON, or breaks the schema, or the URL is not one deliveries may go to; the message names the field and the rule')
  const badMediaType = error('The body is not application/json, names a charset other than utf-8, or has a Content-Encoding')

  fastify.post('/webhooks', {
    config,
    schema: {
      summary: 'Subscribe an endpoint',
      description: 'Every change made from now on whose type the endpoint receives (`events`; without it, every plant added, ' +
        'in the origin body) is POSTed to the URL, signed with the secret this answer shows (and never shows again). Nothing is sent to the URL now.',
      operationId: 'createWebhook',
      tags,
      body: ref(NewWebhookEndpoint),
      response: {
        201: { ...ref(CreatedWebhookEndpoint), description: 'The endpoint, enabled, with its signing secret' },
        400: badBody,
        409: error('The service keeps as many endpoints as it allows (WEBHOOK_ENDPOINT_LIMIT): delete one first'),
        413: error('The body is larger than the service accepts'),
        415: badMediaType,
        503: unavailable
      }
    }
  }, async (request, reply) => {
    const { url, description, events } = request.body
    checkUrl(url)
    const secret = makeSecret()
    try {
      const created = await store.createEndpoint({ url, description, events, secret }, endpointLimit)
      return reply.code(201).send({ ...created, secret })
    } catch (error) {
      if (!(error instanceof EndpointLimitError)) throw error
      throw new HttpError(409, `The service keeps ${endpointLimit} webhook endpoints at most, and has that many: delete one it no longer needs, then register this one.`)
    }
  })

  fastify.get('/webhooks', {
    config,
    preValidation: refuseRepeated,
    schema: {
      summary: 'List the endpoints',
      description: 'Oldest first, a page at a time. While more follow, the `Link` header gives the next page (`rel="next"`); the last page has none.',
      operationId: 'listWebhooks',
      tags,
      querystring: WebhookListQuery,
      response: {
        200: Type.Array(ref(WebhookEndpoint), {
          maxItems: MAX_PAGE,
          description: 'A page of endpoints; never a secret; `[]` when there are none',
          headers: { Link: { ...LinkHeader, description: 'Present while more endpoints follow: `<…>; rel="next"`, a reference to the next page relative to this one' } }
        }),
        400: error('A query parameter is out of range, not a plain decimal, repeated or unknown, or the cursor was altered'),
        503: unavailable
      }
    }
  }, async (request, reply) => {
    const { cursor } = request.query
    // Optional in the document; the schema's default fills it in.
    const limit = request.query.limit as number
    const after = cursor === undefined ? undefined : pages.read('webhooks', cursor)
    // One more than the page: whether a next page exists is known without a count.
    const page = await store.listEndpoints({ limit: limit + 1, after })
    if (page.length > limit) {
      page.length = limit
      // The route's own path, prefix included: the reference resolves against the request URL.
      reply.header('link', `<${request.routeOptions.url}?limit=${limit}&cursor=${pages.write('webhooks', page[limit - 1])}>; rel="next"`)
    }
    return page
  })

  fastify.get('/webhooks/:id', {
    config,
    schema: {
      summary: 'Read an endpoint',
      operationId: 'getWebhook',
      tags,
      params: WebhookParams,
      response: { 200: endpoint('The endpoint; never its secret'), 400: badId, 404: notFound, 503: unavailable }
    }
  }, async (request) => {
    const found = await store.getEndpoint(request.params.id)
    if (found === undefined) throw new HttpError(404, 'No webhook endpoint has this id.')
    return found
  })

  fastify.patch('/webhooks/:id', {
    config,
    schema: {
      summary: 'Change an endpoint',
      description: 'Changes the fields given. Disabling it (`enabled: false`) ends its pending deliveries as failed; ' +
        'they stay listed for a manual retry once it is enabled again. `events: null` returns it to the default (`plant.created` in the origin body).',
      operationId: 'updateWebhook',
      tags,
      params: WebhookParams,
      body: ref(WebhookEndpointPatch),
      response: { 200: endpoint('The endpoint as changed'), 400: badBody, 404: notFound, 413: error('The body is larger than the service accepts'), 415: badMediaType, 503: unavailable }
    }
  }, async (request) => {
    const { url, description, enabled, events } = request.body
    checkUrl(url)
    const updated = await store.updateEndpoint(request.params.id, { url, description, enabled, events })
    if (updated === undefined) throw new HttpError(404, 'No webhook endpoint has this id.')
    return updated
  })

  fastify.delete('/webhooks/:id', {
    config,
    schema: {
      summary: 'Delete an endpoint',
      description: 'Removes the endpoint and its deliveries: the pending ones are never sent.',
      operationId: 'deleteWebhook',
      tags,
      params: WebhookParams,
      response: { 204: { type: 'null', description: 'The endpoint was deleted' }, 400: badId, 404: notFound, 503: unavailable }
    }
  }, async (request, reply) => {
    if (!await store.deleteEndpoint(request.params.id)) throw new HttpError(404, 'No webhook endpoint has this id.')
    return reply.code(204).send()
  })

  fastify.post('/webhooks/:id/rotate-secret', {
    config,
    schema: {
      summary: 'Rotate the signing secret',
      description: 'A new secret signs every attempt from now on; for 24 hours the previous one signs beside it ' +
        '(two `v1,` signatures), so receivers can switch without missing a delivery.',
      operationId: 'rotateWebhookSecret',
      tags,
      params: WebhookParams,
      response: { 200: { ...ref(WebhookSecret), description: 'The new secret, shown this once' }, 400: badId, 404: notFound, 503: unavailable }
    }
  }, async (request) => {
    const secret = makeSecret()
    if (!await store.rotateSecret(request.params.id, secret, new Date(Date.now() + OVERLAP_MS))) {
      throw new HttpError(404, 'No webhook endpoint has this id.')
    }
    return { secret }
  })

  deliveryRoutes(fastify, store)
}

export default webhooks
