import { randomBytes } from 'node:crypto'
import { WEBHOOK_EVENT_TYPES } from '../../schemas/webhooks.js'
import type { AttemptOutcome, Delivery, DeliveryStatus, Endpoint, WebhookEventType } from './webhook-types.js'

/** An endpoint's event types as the stores keep them. */
export function eventBit (type: WebhookEventType): number {
  return 1 << WEBHOOK_EVENT_TYPES.indexOf(type)
}

export function eventMask (events: readonly WebhookEventType[] | null | undefined): number | null {
  return events == null ? null : events.reduce((mask, type) => mask | eventBit(type), 0)
}

function eventTypes (mask: number): WebhookEventType[] {
  return WEBHOOK_EVENT_TYPES.filter((type) => (mask & eventBit(type)) !== 0)
}

/** The mask of every type some enabled endpoint receives, from the rows of the open subscriptions. */
export const SUBSCRIBED_MASK = `SELECT coalesce(max(coalesce(events, 1) & 1), 0) | coalesce(max(events & 2), 0) | coalesce(max(events & 4), 0)
  FROM webhook_subscriptions WHERE until IS NULL`

/** The body of one attempt: the event's data as stored. */
export function deliveryBody (standard: boolean | number, type: string, at: Date | number, data: string): string {
  if (!standard) return data
  return `{"type":"${type}","timestamp":"${new Date(Number(at)).toISOString()}","data":${data}}`
}

let made = 0

/**
 * A new endpoint id: opaque, 32 hex digits: the time in ms, a count of this process's ids, and 64 random
 * bits.
 */
export function newEndpointId (): string {
  made = (made + 1) & 0xffff
  return `ep_${Date.now().toString(16).padStart(12, '0')}${made.toString(16).padStart(4, '0')}${randomBytes(8).toString('hex')}`
}

/** Why a delivery stopped without an attempt of its own, as its lastError says. */
export const STOPPED = {
  disabled: 'The endpoint was disabled; retry this delivery once it is enabled again.',
  gone: 'The endpoint answered another delivery with 410 Gone and was disabled; retry this delivery once it is enabled again.'
}

/** Why the sender disabled an endpoint, as its disabledReason says. */
export const DISABLED = {
  gone: 'The receiver answered 410 Gone.',
  failing: 'Every attempt failed for WEBHOOK_DISABLE_AFTER since the last success.'
}

/** What an attempt's outcome writes to its delivery. */
export function outcomeColumns (outcome: AttemptOutcome) {
  switch (outcome.result) {
    case 'succeeded':
      return { status: 'succeeded', lastStatus: outcome.status, lastError: null, next: null }
    case 'retry':
      return { status: 'pending', lastStatus: outcome.status ?? null, lastError: outcome.error ?? null, next: outcome.at }
    case 'failed':
      return { status: 'failed', lastStatus: outcome.status ?? null, lastError: outcome.error ?? null, next: null }
    case 'gone':
      return { status: 'failed', lastStatus: 410, lastError: 'The receiver answered 410 Gone: the endpoint was disabled.', next: null }
  }
}

/** The secrets that sign now: the current one, then the previous one while its overlap lasts. */
export function activeSecrets (secret: string, previous: string | null, overlapping: boolean): string[] {
  return previous !== null && overlapping ? [secret, previous] : [secret]
}

export interface EndpointRow {
  id: string
  url: string
  description: string | null
  events: number | null
  enabled: boolean | number
  created_at: Date | number
  disabled_at: Date | number | null
  disabled_reason: string | null
}

export function toEndpoint (row: EndpointRow): Endpoint {
  const endpoint: Endpoint = { id: row.id, url: row.url, enabled: Boolean(row.enabled), createdAt: new Date(Number(row.created_at)) }
  if (row.description !== null) endpoint.description = row.description
  if (row.events !== null) endpoint.events = eventTypes(row.events)
  if (row.disabled_at !== null) endpoint.disabledAt = new Date(Number(row.disabled_at))
  if (row.disabled_reason !== null) endpoint.disabledReason = row.disabled_reason
  return endpoint
}

export interface DeliveryRow {
  id: string
  type: string
  plant_id: bigint | string
  status: string
  attempts: number | bigint
  last_status: number | bigint | null
  last_error: string | null
  next_attempt_at: Date | number | bigint | null
  created_at: Date | number | bigint
}

/** A delivery as the API lists it: optional fields absent rather than null. */
export function toDelivery (row: DeliveryRow): Delivery {
  const delivery: Delivery = {
    id: row.id,
    type: row.type as WebhookEventType,
    plantId: BigInt(row.plant_id),
    status: row.status as DeliveryStatus,
    attempts: Number(row.attempts),
    createdAt: new Date(Number(row.created_at))
  }
  if (row.last_status !== null) delivery.lastStatus = Number(row.last_status)
  if (row.last_error !== null) delivery.lastError = row.last_error
  if (row.next_attempt_at !== null && row.status === 'pending') delivery.nextAttemptAt = new Date(Number(row.next_attempt_at))
  return delivery
}

/** The in-process listeners of onDeliveries. */
export function deliveryListeners () {
  const listeners = new Set<() => void>()
  return {
    add (listener: () => void): () => void {
      // A wrapper of its own, so that adding one function twice gives two listeners.
      const entry = (): void => listener()
      listeners.add(entry)
      return () => { listeners.delete(entry) }
    },
    call (): void {
      for (const listener of listeners) listener()
    }
  }
}
