/**
 * The change feed's half of the store port: the outbox's events read in commit order, a page
 * at a time by position, and the retention that prunes them (CONTRACT.md, "The change feed").
 */
import type { WebhookEventType } from './webhook-types.js'

/** One event as the feed serves it. */
export interface FeedEvent {
  /** Its position: increases in commit order. */
  seq: bigint
  type: WebhookEventType
  /** When its change was committed, in ms since the epoch. */
  at: number
  /** The data JSON as the webhook payload carries it: the plant after the change, or `{"id":…}`. */
  data: string
}

export interface FeedPage {
  /** Commit order; `limit` at most. */
  events: FeedEvent[]
  /** The position a next read starts from: the last event's, or the end the read saw when the page is not full. */
  next: bigint
  /** Every position at or below this was pruned: a read from below it has missed events. */
  floor: bigint
}

export interface FeedQuery {
  /** Only events after this position; undefined: from the oldest kept. */
  after?: bigint
  limit: number
  /** The types wanted, as a mask of eventBit (webhook-common.ts). */
  types: number
}

export interface EventFeed {
  /** A page of events after `after`: never one past an event whose change can still commit. */
  read (query: FeedQuery): Promise<FeedPage>
  /** The current end (after=now), and the floor. */
  end (): Promise<{ end: bigint, floor: bigint }>
  /** Calls `listener` after a commit that wrote events. */
  onCommit (listener: () => void): () => void
  /** Drops the events committed before `before` that no webhook delivery still needs; how many. */
  prune (before: Date): Promise<number>
}

/** The floor of a store whose feed is off: no position is kept. */
export const FEED_OFF = 9223372036854775807n
