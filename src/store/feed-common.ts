import type { WebhookEventType } from './webhook-types.js'
import type { FeedEvent } from './feed-types.js'

/** Every type: the feed unfiltered. */
export const ALL_TYPES = 7

/** The SQL of an event row's type bit (webhook-common.ts's eventBit), for a `types` filter. */
export const TYPE_BIT = "CASE type WHEN 'plant.created' THEN 1 WHEN 'plant.updated' THEN 2 ELSE 4 END"

/** Events looked at in one prune step at most. */
export const FEED_PRUNE_CHUNK = 1000

/** How far a prune step may move the floor. */
export function newFloor (rows: Array<{ id: bigint, old: boolean }>): bigint | undefined {
  let floor: bigint | undefined
  for (const row of rows) {
    if (!row.old) break
    floor = row.id
  }
  return floor
}

/** The next position after a page: its last event when full (more may follow), else the end the read saw. */
export function nextPosition (events: FeedEvent[], limit: number, start: bigint, end: bigint): bigint {
  if (events.length === limit && limit > 0) return events[events.length - 1].seq
  return end > start ? end : start
}

export function feedEvent (seq: bigint, type: string, at: number, data: string): FeedEvent {
  return { seq, type: type as WebhookEventType, at, data }
}
