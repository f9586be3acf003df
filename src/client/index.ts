// plant-store/client: a typed client of the service for Node 20 and browsers.
import { eventsApi, type EventsApi } from './events.js'
import { plantsApi, type PlantsApi } from './plants.js'
import { transport } from './request.js'
import { retryPolicy, type RetryOptions } from './retry.js'
import { webhooksApi, type WebhooksApi } from './webhooks.js'

export type {
  FeedEvent, PlantChangedFeedEvent, PlantCreatedFeedEvent, PlantUpdatedFeedEvent, PlantDeletedFeedEvent, NewPlant, NewWebhookEndpoint, Plant, PlantListItem, PlantPatch, WebhookDelivery, WebhookEndpoint, WebhookEndpointPatch, WebhookSecret
} from '../../schemas/index.js'
export { PlantStoreError, type PlantStoreErrorInit, type PlantStoreErrorKind } from './errors.js'
export type { EventFollower, EventsApi, EventType, FollowOptions } from './events.js'
export type { PlantId } from './ids.js'
export type { Page } from './pages.js'
export type { ChangeOptions, ListQuery, NewPlantInput, PageQuery, PlantsApi, ReadOptions, TaggedPlant } from './plants.js'
export type { CallOptions } from './request.js'
export type { RetryOptions } from './retry.js'
export type { DeliveryPageQuery, DeliveryQuery, EndpointPageQuery, EndpointQuery, WebhooksApi } from './webhooks.js'

export interface ClientOptions {
  /** The service's URL, with the prefix its routes are mounted under, if any. */
  baseUrl: string | URL
  /** The bearer token. It is sent in the Authorization header only, to baseUrl's origin only. */
  token: string
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch
  /** How many times to retry (default 3), or the whole policy. */
  retries?: number | RetryOptions
}

export interface PlantStoreClient extends PlantsApi {
  webhooks: WebhooksApi
  /** The change feed: every change, in commit order. */
  events: EventsApi
}

// Visible ASCII: what a header carries unchanged.
const TOKEN = /^[\x21-\x7E]+$/

/** A client of one Plant Store service. Options are checked here: a mistake throws now, not at the first call. */
export function createClient (options: ClientOptions): PlantStoreClient {
  const base = new URL(options.baseUrl)
  if (!/^https?:$/.test(base.protocol) || base.username !== '' || base.password !== '') {
    throw new TypeError('baseUrl must be an http or https URL without user info')
  }
  // A base ending in a slash keeps its path: `/v1` + `plants` is `/v1/plants`.
  if (!base.pathname.endsWith('/')) base.pathname += '/'
  base.search = ''
  base.hash = ''
  if (typeof options.token !== 'string' || !TOKEN.test(options.token)) {
    throw new TypeError('token must be a non-empty string of visible ASCII characters')
  }
  const doFetch = options.fetch ?? globalThis.fetch
  if (typeof doFetch !== 'function') throw new TypeError('fetch is not available here: pass one as options.fetch')
  const send = transport(doFetch, options.token, retryPolicy(options.retries))
  return { ...plantsApi(send, base), webhooks: webhooksApi(send, base), events: eventsApi(send, base) }
}
