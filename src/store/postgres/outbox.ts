import type pg from 'pg'
import { stringifyNewPlant } from '../new-plant-json.js'
import type { PlantRecord } from '../types.js'
import { activeSecrets, deliveryBody, DISABLED, eventBit, STOPPED, SUBSCRIBED_MASK } from '../webhook-common.js'
import type { ClaimOptions, ClaimedDelivery, Expansion, WebhookEventType } from '../webhook-types.js'
import { CHANNEL } from './listen.js'
import type { Query } from './query.js'

/** Ends a notification whose events only the feed receives: it wakes no sender. */
export const FEED_ONLY = ':feed'

// A batch's creates and their events in one statement, hence one transaction.
const insertStatement = (feed: boolean): string => `WITH new AS (
    SELECT (e->>'id')::bigint AS id, e->>'name' AS name, e->>'tag' AS tag, e::text AS body FROM json_array_elements($1::json) AS e
  ), inserted AS (
    INSERT INTO plants (id, name, tag) SELECT id, name, tag FROM new
    ON CONFLICT (id) DO NOTHING RETURNING id
  ), ${outboxEvents('plant.created', 'new.id', 'new.body', 'new JOIN inserted ON inserted.id = new.id', feed)}
  SELECT id, (SELECT deliveries FROM notified) AS notified FROM inserted`
const INSERT = insertStatement(false)
const FEED_INSERT = insertStatement(true)

/** The CTEs that write a statement's events, one per row of `from`; `notified` has a row when any was written. */
export function outboxEvents (type: WebhookEventType, id: string, data: string, from: string, feed = false): string {
  const received = `state.mask & ${eventBit(type)} <> 0`
  return `state AS (
    SELECT value, mask FROM webhook_generation
  ), ${feed ? feedOrder(from) : ''}events AS (
    INSERT INTO webhook_events (plant_id, type, body, generation, fanout)
    SELECT ${id}, '${type}', ${data}, state.value, ${feed ? `CASE WHEN ${received} THEN '' END` : "''"} FROM ${from} CROSS JOIN state
    ${feed ? 'CROSS JOIN ordered' : `WHERE ${received}`} RETURNING fanout IS NOT NULL AS received
  ), notified AS (
    SELECT bool_or(received) AS deliveries, pg_notify('${CHANNEL}', $2 || CASE WHEN bool_or(received) THEN '' ELSE '${FEED_ONLY}' END)
    FROM events HAVING count(*) > 0
  )`
}

/**
 * The change feed's order on PostgreSQL: an event's id is taken under a transaction-level lock held to the
 * commit, so ids follow commit order and no reader sees an id while a smaller one can still commit.
 */
function feedOrder (from: string): string {
  return `ordered AS (
    SELECT pg_advisory_xact_lock(hashtext('plant-store:events')) FROM (SELECT count(*) AS n FROM ${from}) c WHERE c.n > 0
  ), `
}

// One step of an event's expansion: the endpoints whose subscription spell covers its generation.
export const EXPAND = `WITH targets AS (
    SELECT s.endpoint_id, s.events, e.enabled FROM webhook_subscriptions s JOIN webhook_endpoints e ON e.id = s.endpoint_id
    WHERE s.endpoint_id > $2 AND s.since <= $3 AND (s.until IS NULL OR s.until > $3) AND coalesce(s.events, 1) & $4 <> 0
    ORDER BY s.endpoint_id LIMIT $5 FOR KEY SHARE OF e
  ), added AS (
    INSERT INTO webhook_deliveries (id, event_id, endpoint_id, status, last_error, next_attempt_at, created_at, standard, finished_at)
    SELECT 'msg_' || lpad(to_hex((extract(epoch FROM now()) * 1000)::bigint), 12, '0') || right(replace(gen_random_uuid()::text, '-', ''), 16),
      $1, t.endpoint_id, CASE WHEN t.enabled THEN 'pending' ELSE 'failed' END, CASE WHEN t.enabled THEN NULL ELSE $6 END,
      CASE WHEN t.enabled THEN now() END, $7, t.events IS NOT NULL, CASE WHEN t.enabled THEN NULL ELSE now() END
    FROM targets t RETURNING endpoint_id
  )
  SELECT count(*)::int AS added, max(endpoint_id) AS last FROM added`

/** Events looked at in one expansion step at most. */
const UNEXPANDED = `SELECT id, type, generation, fanout, created_at FROM webhook_events WHERE fanout IS NOT NULL
  ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`
const EVENTS_PER_STEP = 100

interface EventRow { id: string, type: WebhookEventType, generation: string, fanout: string, created_at: Date }

// The lease moves next_attempt_at to its end: a lease that lapses makes the delivery due again by itself.
export const CLAIM = `UPDATE webhook_deliveries d
  SET lease_owner = $1, lease_until = now() + $3::float8 * interval '1 millisecond', next_attempt_at = now() + $3::float8 * interval '1 millisecond'
  FROM webhook_endpoints e, webhook_events v
  WHERE d.id = ANY(ARRAY(
    SELECT due.id FROM webhook_deliveries due
    WHERE due.status = 'pending' AND due.next_attempt_at <= now() AND NOT (due.endpoint_id = ANY($4::text[]))
      AND (SELECT ep.enabled FROM webhook_endpoints ep WHERE ep.id = due.endpoint_id)
    ORDER BY due.next_attempt_at LIMIT (SELECT $2::int) FOR UPDATE OF due SKIP LOCKED
  )) AND e.id = d.endpoint_id AND v.id = d.event_id
  RETURNING d.id, d.endpoint_id, e.url, e.secret, e.previous_secret, coalesce(e.previous_secret_until > now(), false) AS overlapping,
    d.standard, v.type, v.created_at AS at, v.body, d.attempts`

// KEY SHARE on the endpoints first, as FINISH takes them (see finish.ts).
const RENEW = `UPDATE webhook_deliveries d
  SET lease_until = now() + $3::float8 * interval '1 millisecond', next_attempt_at = now() + $3::float8 * interval '1 millisecond'
  WHERE d.id = ANY($1::text[]) AND d.lease_owner = $2 AND d.status = 'pending' AND ARRAY[d.endpoint_id] <@ ARRAY(
    SELECT e.id FROM webhook_endpoints e WHERE e.id = ANY(ARRAY(SELECT endpoint_id FROM webhook_deliveries WHERE id = ANY($1::text[])))
    FOR KEY SHARE OF e
  )`

const RELEASE = `WITH released AS (
    UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL, next_attempt_at = now()
    WHERE lease_owner = $1 AND status = 'pending' RETURNING 1
  )
  SELECT pg_notify('${CHANNEL}', $2) FROM released LIMIT 1`

export const PRUNE = `DELETE FROM webhook_deliveries WHERE id = ANY(ARRAY(
    SELECT id FROM webhook_deliveries WHERE status <> 'pending' AND finished_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED
  )) RETURNING event_id`

// Events that lost their last delivery go with it, once expanded.
export const ORPHANS = `DELETE FROM webhook_events e WHERE e.id = ANY($1::bigint[]) AND e.fanout IS NULL AND e.id < (SELECT floor FROM webhook_feed)
  AND NOT EXISTS (SELECT FROM webhook_deliveries d WHERE d.event_id = e.id)`

// Subscription spells that no event can fall in any more.
const FORGET_CLOSED = `DELETE FROM webhook_subscriptions WHERE closed_at < now() - interval '1 hour' AND until <= coalesce(
  (SELECT min(generation) FROM webhook_events WHERE fanout IS NOT NULL), (SELECT value FROM webhook_generation))`

/** After a change of an endpoint's enabled state or events (or its creation or deletion), in its transaction. */
export async function resubscribe (client: pg.PoolClient, endpoint: string, deleted = false): Promise<void> {
  const { rows } = await client.query<{ value: string }>('UPDATE webhook_generation SET value = value + 1 RETURNING value')
  const generation = rows[0].value
  if (deleted) await client.query('DELETE FROM webhook_subscriptions WHERE endpoint_id = $1', [endpoint])
  else {
    await client.query('UPDATE webhook_subscriptions SET until = $2, closed_at = now() WHERE endpoint_id = $1 AND until IS NULL', [endpoint, generation])
    await client.query('INSERT INTO webhook_subscriptions (endpoint_id, events, since) SELECT id, events, $2 FROM webhook_endpoints WHERE id = $1 AND enabled', [endpoint, generation])
  }
  await client.query(`UPDATE webhook_generation SET mask = (${SUBSCRIBED_MASK})`)
}

/** Runs `work` in one transaction on one pooled connection. */
/** Runs `work` in a transaction; `wrote` tells whether it wrote anything (by default it did). */
export type Transaction = <T>(work: (client: pg.PoolClient) => Promise<T>, wrote?: (result: T) => boolean) => Promise<T>

/** Takes the endpoint's row lock that conflicts with a batch's KEY SHARE. */
export async function lockEndpoint (client: pg.PoolClient, id: string): Promise<boolean> {
  return (await client.query('SELECT FROM webhook_endpoints WHERE id = $1 FOR UPDATE', [id])).rowCount === 1
}

export async function stopPending (client: pg.PoolClient, endpoint: string, why: string): Promise<void> {
  await client.query(`UPDATE webhook_deliveries SET status = 'failed', last_error = $2, next_attempt_at = NULL, lease_owner = NULL, lease_until = NULL, finished_at = now()
    WHERE endpoint_id = $1 AND status = 'pending'`, [endpoint, why])
}

// Prune in chunks, so that a long backlog never makes one long transaction.
const PRUNE_CHUNK = 500

interface ClaimRow {
  id: string,
  endpoint_id: string,
  url: string,
  secret: string,
  previous_secret: string | null,
  overlapping: boolean,
  standard: boolean,
  type: string,
  at: Date,
  body: string,
  attempts: number
}

/** The outbox's statements: the batch insert that fills it, and the sender's claim, release and prune. */
export function outboxQueries (query: Query, transaction: Transaction, instance: string, feed = false) {
  const [name, insert] = feed ? ['plant-store-insert-outbox-feed', FEED_INSERT] : ['plant-store-insert-outbox', INSERT]
  return {
    /** Inserts a batch of new plants with their events; the ids inserted, and whether events were written (`notified`) for endpoints (true). */
    async insert (plants: PlantRecord[], write: Query): Promise<{ created: string[], notified: boolean | null }> {
      const { rows } = await write<{ id: string, notified: boolean | null }>(name, insert, [`[${plants.map(stringifyNewPlant).join(',')}]`, instance])
      return { created: rows.map((row) => row.id), notified: rows.length === 0 ? null : rows[0].notified }
    },

    async claim (owner: string, limit: number, leaseMs: number, options?: ClaimOptions): Promise<ClaimedDelivery[]> {
      const { rows } = await query<ClaimRow>(undefined, CLAIM, [owner, limit, leaseMs, options?.exclude ?? []])
      return rows.map((row) => ({
        id: row.id,
        endpointId: row.endpoint_id,
        url: row.url,
        secrets: activeSecrets(row.secret, row.previous_secret, row.overlapping),
        body: deliveryBody(row.standard, row.type, row.at, row.body),
        attempts: row.attempts
      }))
    },

    /** One expansion step in a transaction of its own: `limit` deliveries at most. */
    async expand (limit: number): Promise<Expansion> {
      return await transaction(async (client) => {
        const { rows: events } = await client.query<EventRow>(UNEXPANDED, [EVENTS_PER_STEP])
        let deliveries = 0
        for (const event of events) {
          // Never 0: a step that fills its room returns at once.
          const room = limit - deliveries
          const { rows } = await client.query<{ added: number, last: string | null }>(EXPAND,
            [event.id, event.fanout, event.generation, eventBit(event.type), room, STOPPED.disabled, event.created_at])
          deliveries += rows[0].added
          if (rows[0].added === room) {
            await client.query('UPDATE webhook_events SET fanout = $2 WHERE id = $1', [event.id, rows[0].last])
            return { deliveries, more: true }
          }
          await client.query('UPDATE webhook_events SET fanout = NULL WHERE id = $1', [event.id])
          // An event that went to no endpoint (each was deleted or had stopped receiving its type) is done with.
          await client.query(ORPHANS, [[event.id]])
        }
        return { deliveries, more: events.length === EVENTS_PER_STEP }
      // A step that found nothing to expand, or added no delivery, says nothing of whether writes succeed.
      }, (expansion) => expansion.deliveries > 0)
    },

    async renew (owner: string, ids: readonly string[], leaseMs: number): Promise<void> {
      await query(undefined, RENEW, [ids, owner, leaseMs])
    },

    async disableFailing (since: Date): Promise<number> {
      return await transaction(async (client) => {
        // Each endpoint's row lock first, then its deliveries, as every writer takes them.
        const { rows } = await client.query<{ id: string }>('SELECT id FROM webhook_endpoints WHERE enabled AND failing_since <= $1 ORDER BY id FOR UPDATE', [since])
        for (const { id } of rows) {
          await client.query('UPDATE webhook_endpoints SET enabled = false, disabled_at = now(), disabled_reason = $2 WHERE id = $1', [id, DISABLED.failing])
          await stopPending(client, id, STOPPED.disabled)
          await resubscribe(client, id)
        }
        return rows.length
      }, (count) => count > 0)
    },

    async release (owner: string): Promise<void> {
      await query('plant-store-webhooks-release', RELEASE, [owner, instance])
    },

    async prune (before: Date): Promise<number> {
      let total = 0
      for (let pruned = PRUNE_CHUNK; pruned === PRUNE_CHUNK; total += pruned) {
        pruned = await transaction(async (client) => {
          const { rows } = await client.query<{ event_id: string }>(PRUNE, [before, PRUNE_CHUNK])
          await client.query(ORPHANS, [[...new Set(rows.map((row) => row.event_id))]])
          if (rows.length < PRUNE_CHUNK) await client.query(FORGET_CLOSED)
          return rows.length
        })
      }
      return total
    }
  }
}
