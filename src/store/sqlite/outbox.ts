import type Database from 'better-sqlite3'
import { eventBit, STOPPED, SUBSCRIBED_MASK } from '../webhook-common.js'
import type { Expansion, WebhookEventType } from '../webhook-types.js'

/** Events looked at in one expansion step at most: a step with few endpoints per event ends soon too. */
export const EVENTS_PER_STEP = 100

interface EventRow { id: number, type: WebhookEventType, generation: number, fanout: string, created_at: number }

/** The statements that must stay served by an index (test/src/store/webhook-plans.test.ts). */
export const EXPANSION = {
  unexpanded: 'SELECT id, type, generation, fanout, created_at FROM webhook_events WHERE fanout IS NOT NULL ORDER BY id LIMIT ?',
  // The endpoints whose subscription spell covers the event's generation.
  fanout: `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, status, last_error, next_attempt_at, created_at, standard, finished_at)
    SELECT 'msg_' || printf('%012x', @now) || lower(hex(randomblob(8))), @event, s.endpoint_id,
      CASE WHEN e.enabled THEN 'pending' ELSE 'failed' END, CASE WHEN e.enabled THEN NULL ELSE @stopped END,
      CASE WHEN e.enabled THEN @now END, @createdAt, s.events IS NOT NULL, CASE WHEN e.enabled THEN NULL ELSE @now END
    FROM webhook_subscriptions s JOIN webhook_endpoints e ON e.id = s.endpoint_id
    WHERE s.endpoint_id > @after AND s.since <= @generation AND (s.until IS NULL OR s.until > @generation)
      AND (coalesce(s.events, 1) & @bit) <> 0
    ORDER BY s.endpoint_id LIMIT @limit
    RETURNING endpoint_id`
}

/** The SQLite outbox: the one event a change writes in its batch's transaction. */
export function sqliteOutbox (db: Database.Database) {
  const sql = {
    state: db.prepare<[], { mask: number }>('SELECT mask FROM webhook_generation'),
    insertEvent: db.prepare<[bigint, string, string, number]>(`INSERT INTO webhook_events (plant_id, type, body, created_at, generation, fanout)
      VALUES (?, ?, ?, ?, (SELECT value FROM webhook_generation), '')`),
    // Born expanded: no subscription spell is ever matched against its generation.
    insertFeedEvent: db.prepare<[bigint, string, string, number]>('INSERT INTO webhook_events (plant_id, type, body, created_at) VALUES (?, ?, ?, ?)'),
    bump: db.prepare<[], number>('UPDATE webhook_generation SET value = value + 1 RETURNING value').pluck(),
    close: db.prepare('UPDATE webhook_subscriptions SET until = @generation, closed_at = @now WHERE endpoint_id = @endpoint AND until IS NULL'),
    open: db.prepare('INSERT INTO webhook_subscriptions (endpoint_id, events, since) SELECT id, events, @generation FROM webhook_endpoints WHERE id = @endpoint AND enabled = 1'),
    forget: db.prepare<[string]>('DELETE FROM webhook_subscriptions WHERE endpoint_id = ?'),
    remask: db.prepare(`UPDATE webhook_generation SET mask = (${SUBSCRIBED_MASK})`),
    // Spells that no event can fall in any more.
    forgetClosed: db.prepare(`DELETE FROM webhook_subscriptions WHERE until <= coalesce(
      (SELECT min(generation) FROM webhook_events WHERE fanout IS NOT NULL), (SELECT value FROM webhook_generation))`),
    unexpanded: db.prepare<[number], EventRow>(EXPANSION.unexpanded),
    fanout: db.prepare<Record<string, unknown>, string>(EXPANSION.fanout).pluck(),
    advance: db.prepare<[string | null, number]>('UPDATE webhook_events SET fanout = ? WHERE id = ?'),
    // Below the feed's floor only: the feed keeps the events above it (feed-types.ts).
    orphan: db.prepare<[number, number]>(`DELETE FROM webhook_events WHERE id = ? AND id < (SELECT floor FROM webhook_feed)
      AND NOT EXISTS (SELECT 1 FROM webhook_deliveries WHERE event_id = ?)`)
  }
  let mask = (sql.state.get() as { mask: number }).mask
  // The mask an endpoint's change leaves, until its transaction ends.
  let staged: number | undefined

  return {
    /** Whether some enabled endpoint receives `type`: else a change of that type writes no event. */
    receives (type: WebhookEventType): boolean {
      return (mask & eventBit(type)) !== 0
    },

    /** Writes a change's event: to expand (`received`), or for the change feed alone, born expanded. */
    write (type: WebhookEventType, plantId: bigint, data: string, now: number, received = true): void {
      ;(received ? sql.insertEvent : sql.insertFeedEvent).run(plantId, type, data, now)
    },

    /** After a change of an endpoint's enabled state or events (or its creation), in the same transaction. */
    resubscribe (endpoint: string, deleted = false): void {
      const generation = sql.bump.get() as number
      if (deleted) sql.forget.run(endpoint)
      else {
        sql.close.run({ generation, endpoint, now: Date.now() })
        sql.open.run({ generation, endpoint })
      }
      sql.remask.run()
      staged = (sql.state.get() as { mask: number }).mask
    },

    /** Once a transaction has ended: the mask it left holds if it committed. */
    settle (committed: boolean): void {
      if (committed && staged !== undefined) mask = staged
      staged = undefined
    },

    /** One step, inside the caller's transaction: `limit` deliveries at most. */
    expand (limit: number): Expansion {
      const now = Date.now()
      const events = sql.unexpanded.all(EVENTS_PER_STEP)
      let deliveries = 0
      for (const event of events) {
        // Never 0: a step that fills its room returns at once.
        const room = limit - deliveries
        const added = sql.fanout.all({
          now,
          event: event.id,
          stopped: STOPPED.disabled,
          createdAt: event.created_at,
          after: event.fanout,
          generation: event.generation,
          bit: eventBit(event.type),
          limit: room
        })
        deliveries += added.length
        if (added.length === room) {
          // The last endpoint id in SQLite's order (BINARY: the ids are ASCII), whatever order RETURNING gave.
          sql.advance.run([...added].sort()[added.length - 1], event.id)
          return { deliveries, more: true }
        }
        sql.advance.run(null, event.id)
        // An event that went to no endpoint (each was deleted or had stopped receiving its type) is done with.
        sql.orphan.run(event.id, event.id)
      }
      return { deliveries, more: events.length === EVENTS_PER_STEP }
    },

    prune (): void {
      sql.forgetClosed.run()
    }
  }
}
