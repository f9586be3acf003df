/**
 * The webhook half of the store port: subscriptions, and the outbox: one event that each change writes in the
 * same transaction as itself, which the sender then expands into a delivery per endpoint.
 */
import type { WebhookEventType } from '../../schemas/webhooks.js'

export type { WebhookEventType }

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed'

/** A subscription as the API shows it: never its secrets. */
export interface Endpoint {
  /** Opaque, made by the store. */
  id: string
  url: string
  description?: string
  /** The event types it receives, as Standard Webhooks payloads. */
  events?: WebhookEventType[]
  enabled: boolean
  createdAt: Date
  /** When the sender disabled it (a 410, or every attempt failing for WEBHOOK_DISABLE_AFTER). */
  disabledAt?: Date
  /** Why the sender disabled it. */
  disabledReason?: string
}

export interface NewEndpoint {
  url: string
  description?: string
  events?: readonly WebhookEventType[]
  /** `whsec_…`, made by the caller. */
  secret: string
}

export interface EndpointPatch {
  url?: string
  description?: string
  enabled?: boolean
  /** null: back to the default (no `events`). */
  events?: readonly WebhookEventType[] | null
}

/** One delivery of one event to one endpoint, as the API lists it. */
export interface Delivery {
  /** Opaque; it is also the `webhook-id` of every attempt. */
  id: string
  type: WebhookEventType
  plantId: bigint
  status: DeliveryStatus
  attempts: number
  lastStatus?: number
  lastError?: string
  nextAttemptAt?: Date
  createdAt: Date
}

export interface DeliveryPage {
  limit: number
  /** Only deliveries after this one in listing order (newest first: by createdAt, then id, both descending). */
  before?: { createdAt: Date, id: string }
}

/** A delivery the sender holds under a lease: everything one attempt needs. */
export interface ClaimedDelivery {
  id: string
  endpointId: string
  url: string
  /** Every secret that signs now: the current one first, then one still in its overlap. */
  secrets: string[]
  /** The JSON sent byte for byte: the NewPlant, or the Standard Webhooks payload for an endpoint with `events`. */
  body: string
  /** Attempts made before this one. */
  attempts: number
}

export interface ClaimOptions {
  /** Endpoints whose deliveries are not claimed now. */
  exclude?: readonly string[]
}

/** What one attempt came to. */
export type AttemptOutcome =
  | { result: 'succeeded', status: number }
  /** Try again at `at` (the schedule had a delay left). */
  | { result: 'retry', at: Date, status?: number, error?: string }
  /** The schedule is spent: `failed`, kept for a manual retry. */
  | { result: 'failed', status?: number, error?: string }
  /** The receiver answered 410: the endpoint is disabled, its pending deliveries stop. */
  | { result: 'gone', status: 410 }

/** What one expansion step did. */
export interface Expansion {
  /** Deliveries it added. */
  deliveries: number
  /** Whether events are left to expand (the step stopped at its bound). */
  more: boolean
}

/** A page of endpoints in creation order (by createdAt, then id). */
export interface EndpointPage {
  limit: number
  /** Only endpoints after this one: the last endpoint of the previous page. */
  after?: { createdAt: Date, id: string }
}

/** Creating an endpoint would pass the number the caller allows (WEBHOOK_ENDPOINT_LIMIT): nothing was created. */
export class EndpointLimitError extends Error {
  constructor (readonly limit: number) {
    super(`the limit of ${limit} webhook endpoints is reached`)
    this.name = 'EndpointLimitError'
  }
}

export interface WebhookStore {
  /** The key that authenticates list cursors, the same as PlantStore.cursorKey. */
  readonly cursorKey: Buffer
  /** Rejects with EndpointLimitError when `limit` endpoints exist already. */
  createEndpoint (endpoint: NewEndpoint, limit?: number): Promise<Endpoint>
  /** Oldest first (by createdAt, then id), a page at a time by key; every endpoint without a page. */
  listEndpoints (page?: EndpointPage): Promise<Endpoint[]>
  getEndpoint (id: string): Promise<Endpoint | undefined>
  /** Undefined when there is no such endpoint. */
  updateEndpoint (id: string, patch: EndpointPatch): Promise<Endpoint | undefined>
  /** Cancels its pending deliveries; false when there was none. */
  deleteEndpoint (id: string): Promise<boolean>
  /** The new secret signs from now on; the previous one signs beside it until `overlapUntil`. False when absent. */
  rotateSecret (id: string, secret: string, overlapUntil: Date): Promise<boolean>
  /** Newest first; undefined when the endpoint does not exist. */
  listDeliveries (endpointId: string, page: DeliveryPage): Promise<Delivery[] | undefined>
  /** Makes a delivery due now, whatever its status; false when it does not exist under that endpoint. */
  retryDelivery (endpointId: string, deliveryId: string): Promise<boolean>

  /** Expands events into deliveries, `limit` deliveries at most in one transaction. */
  expand (limit: number): Promise<Expansion>
  /** Leases up to `limit` due deliveries of enabled endpoints, the longest due first. */
  claim (owner: string, limit: number, leaseMs: number, options?: ClaimOptions): Promise<ClaimedDelivery[]>
  /** Records an attempt's outcome and ends the lease, if `owner` still holds it. */
  finish (owner: string, deliveryId: string, outcome: AttemptOutcome): Promise<void>
  /** Moves the leases `owner` still holds on `deliveryIds` to end at now + leaseMs. */
  renew (owner: string, deliveryIds: readonly string[], leaseMs: number): Promise<void>
  /** Ends every lease `owner` holds, leaving those deliveries due (a clean shutdown). */
  release (owner: string): Promise<void>
  /** Disables every enabled endpoint whose attempts have all failed since `since` or before. */
  disableFailing (since: Date): Promise<number>
  /** Deletes deliveries finished (succeeded or failed) before `before`, and events with none left. */
  prune (before: Date): Promise<number>
  /** The deliveries still pending, and when the oldest of them was created (metrics). */
  backlog (): Promise<{ pending: number, oldest?: Date }>
  /** Calls `listener` after a commit that added events or deliveries. */
  onDeliveries (listener: () => void): () => void
}
