import type { NewWebhookEndpoint, WebhookDelivery, WebhookEndpoint, WebhookEndpointPatch, WebhookSecret } from '../../schemas/index.js'
import { stringifyExact } from '../shared/exact-json.js'
import { page, walk, type Page, type Raw } from './pages.js'
import { expectEmpty, readBody, type Call, type CallOptions, type Repeat, type Send } from './request.js'

export interface DeliveryQuery {
  /** Deliveries per page, 1 to 100. */
  limit?: number
}

export interface DeliveryPageQuery extends DeliveryQuery {
  /** Where the page starts: a `nextCursor` of the previous page. */
  cursor?: string
}

export interface EndpointQuery {
  /** Endpoints per page, 1 to 100. */
  limit?: number
}

export interface EndpointPageQuery extends EndpointQuery {
  /** Where the page starts: a `nextCursor` of the previous page. */
  cursor?: string
}

/** The subscriptions to the plant-added event (`/webhooks`). Endpoint and delivery ids are opaque strings. */
export interface WebhooksApi {
  /** Registers an endpoint; the answer is the only time its secret is shown. */
  create (endpoint: NewWebhookEndpoint, options?: CallOptions): Promise<WebhookEndpoint & WebhookSecret>
  /** Every endpoint, oldest first, page after page. */
  list (query?: EndpointQuery, options?: CallOptions): AsyncGenerator<WebhookEndpoint, void, undefined>
  listPage (query?: EndpointPageQuery, options?: CallOptions): Promise<Page<WebhookEndpoint>>
  get (id: string, options?: CallOptions): Promise<WebhookEndpoint>
  update (id: string, patch: WebhookEndpointPatch, options?: CallOptions): Promise<WebhookEndpoint>
  /** Deletes the endpoint and cancels its pending deliveries. */
  delete (id: string, options?: CallOptions): Promise<void>
  /** A new secret; the previous one keeps signing beside it for 24 h. Not retried but on 429. */
  rotateSecret (id: string, options?: CallOptions): Promise<WebhookSecret>
  /** The endpoint's deliveries, newest first, page after page. */
  deliveries (id: string, query?: DeliveryQuery, options?: CallOptions): AsyncGenerator<WebhookDelivery, void, undefined>
  deliveriesPage (id: string, query?: DeliveryPageQuery, options?: CallOptions): Promise<Page<WebhookDelivery>>
  /** One more attempt now, whatever the delivery's status. Not retried but on 429. */
  retryDelivery (id: string, deliveryId: string, options?: CallOptions): Promise<void>
}

function delivery (raw: Raw): WebhookDelivery {
  return { ...raw, plantId: BigInt(raw.plantId) } as WebhookDelivery
}

export function webhooksApi (send: Send, base: URL): WebhooksApi {
  const at = (...path: string[]): URL => new URL(['webhooks', ...path.map(encodeURIComponent)].join('/'), base)
  const paged = (url: URL, query: DeliveryPageQuery | EndpointPageQuery): URL => {
    if (query.limit !== undefined) url.searchParams.set('limit', String(query.limit))
    if (query.cursor !== undefined) url.searchParams.set('cursor', query.cursor)
    return url
  }
  const deliveriesUrl = (id: string, query: DeliveryPageQuery): URL => paged(at(id, 'deliveries'), query)
  const endpoint = (raw: Raw) => raw as WebhookEndpoint
  async function json<T> (call: Call, status: number, options: CallOptions | undefined): Promise<T> {
    return readBody(call, await send(call, options), status) as T
  }
  async function empty (call: Call, status: number, options: CallOptions | undefined): Promise<void> {
    expectEmpty(call, await send(call, options), status)
  }
  const write = (method: Call['method'], url: URL, value: unknown, repeat: Repeat): Call =>
    ({ method, url, body: stringifyExact(value), repeat })

  return {
    create: (endpoint, options) => json(write('POST', at(), endpoint, 'once'), 201, options),
    list: (query = {}, options) => walk(send, paged(at(), { limit: query.limit }), endpoint, options),
    listPage: (query = {}, options) => page(send, paged(at(), query), endpoint, options),
    get: (id, options) => json({ method: 'GET', url: at(id), repeat: 'idempotent' }, 200, options),
    update: (id, patch, options) => json(write('PATCH', at(id), patch, 'idempotent'), 200, options),
    delete: (id, options) => empty({ method: 'DELETE', url: at(id), repeat: 'idempotent' }, 204, options),
    rotateSecret: (id, options) => json({ method: 'POST', url: at(id, 'rotate-secret'), repeat: 'once' }, 200, options),
    deliveries: (id, query = {}, options) => walk(send, deliveriesUrl(id, { limit: query.limit }), delivery, options),
    deliveriesPage: (id, query = {}, options) => page(send, deliveriesUrl(id, query), delivery, options),
    retryDelivery: (id, deliveryId, options) => empty({ method: 'POST', url: at(id, 'deliveries', deliveryId, 'retry'), repeat: 'once' }, 202, options)
  }
}
