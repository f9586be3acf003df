import type pg from 'pg'
import { stringifyNewPlant } from '../new-plant-json.js'
import type { PlantRecord } from '../types.js'
import { activeSecrets } from '../webhook-common.js'
import type { ClaimOptions, ClaimedDelivery } from '../webhook-types.js'
import { CHANNEL } from './listen.js'
import type { Query } from './query.js'

// A batch's creates, their events and their deliveries in one statement, hence one
// transaction: no plant without its event, no event without its plant, one round trip.
// The batch is one parameter, a JSON array of the plants' NewPlant JSON: `json` (not
// jsonb) keeps each element's text as sent, which is the event's body, and ->> gives
// the id's digits as written, so the cast to bigint is exact. One string joined from
// bodies already made costs the service less than four arrays pg would escape element by element.
// Only the rows this statement inserted get an event: a replay or a conflict gets none.
// KEY SHARE on the enabled endpoints: a disable or delete (FOR UPDATE) in progress is
// waited for, and an endpoint changed since the statement began is seen as it is now.
// pg_notify is queued with the transaction and sent by its commit. A delivery id starts with the
// time in ms (12 hex digits), then 64 random bits, so that new keys go at the end of the index.
const INSERT = `WITH new AS (
    SELECT (e->>'id')::bigint AS id, e->>'name' AS name, e->>'tag' AS tag, e::text AS body FROM json_array_elements($1::json) AS e
  ), inserted AS (
    INSERT INTO plants (id, name, tag) SELECT id, name, tag FROM new
    ON CONFLICT (id) DO NOTHING RETURNING id
  ), endpoints AS (
    SELECT id FROM webhook_endpoints WHERE enabled FOR KEY SHARE
  ), events AS (
    INSERT INTO webhook_events (plant_id, body)
    SELECT new.id, new.body FROM new JOIN inserted ON inserted.id = new.id
    WHERE EXISTS (SELECT FROM endpoints) RETURNING id
  ), deliveries AS (
    INSERT INTO webhook_deliveries (id, event_id, endpoint_id, status, next_attempt_at)
    SELECT 'msg_' || lpad(to_hex((extract(epoch FROM now()) * 1000)::bigint), 12, '0') || right(replace(gen_random_uuid()::text, '-', ''), 16),
      events.id, endpoints.id, 'pending', now()
    FROM events CROSS JOIN endpoints RETURNING 1
  ), notified AS (
    SELECT pg_notify('${CHANNEL}', $2) FROM deliveries LIMIT 1
  )
  SELECT id, (SELECT count(*) FROM notified) AS notified FROM inserted`

// The lease moves next_attempt_at to its end: a lease that lapses makes the delivery due again by itself.
// SKIP LOCKED: instances claiming at once take different deliveries, never waiting on each other.
// `= ANY(ARRAY(…))` rather than `IN (…)`: the planner then looks the chosen rows up by key,
// where a semi-join may scan the whole table (here and in PRUNE). The due deliveries are read
// in the order of their index and the read stops at the limit: the endpoint is checked row by
// row (a subquery, not a join), and the limit is a subquery too, so that the planner counts on
// stopping early: one that believes the backlog small (statistics from when the outbox was empty)
// would otherwise sort all of it to take its first rows. Sent unnamed, so planned at every claim
// for the table's size then: a plan kept from when it was small reads it whole once it is not.
export const CLAIM = `UPDATE webhook_deliveries d
  SET lease_owner = $1, lease_until = now() + $3::float8 * interval '1 millisecond', next_attempt_at = now() + $3::float8 * interval '1 millisecond'
  FROM webhook_endpoints e, webhook_events v
  WHERE d.id = ANY(ARRAY(
    SELECT due.id FROM webhook_deliveries due
    WHERE due.status = 'pending' AND due.next_attempt_at <= now() AND NOT (due.endpoint_id = ANY($4::text[]))
      AND (SELECT ep.enabled FROM webhook_endpoints ep WHERE ep.id = due.endpoint_id)
    ORDER BY due.next_attempt_at LIMIT (SELECT $2::int) FOR UPDATE OF due SKIP LOCKED
  )) AND e.id = d.endpoint_id AND v.id = d.event_id
  RETURNING d.id, d.endpoint_id, e.url, e.secret, e.previous_secret, coalesce(e.previous_secret_until > now(), false) AS overlapping, v.body, d.attempts`

const RELEASE = `WITH released AS (
    UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL, next_attempt_at = now()
    WHERE lease_owner = $1 AND status = 'pending' RETURNING 1
  )
  SELECT pg_notify('${CHANNEL}', $2) FROM released LIMIT 1`

export const PRUNE = `DELETE FROM webhook_deliveries WHERE id = ANY(ARRAY(
    SELECT id FROM webhook_deliveries WHERE status = 'succeeded' AND created_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED
  )) RETURNING event_id`

// Events that lost their last delivery go with it. A delivery is never added to an
// existing event, so an event seen here without deliveries can gain none.
export const ORPHANS = `DELETE FROM webhook_events e WHERE e.id = ANY($1::bigint[])
  AND NOT EXISTS (SELECT FROM webhook_deliveries d WHERE d.event_id = e.id)`

/** Runs `work` in one transaction on one pooled connection. */
export type Transaction = <T>(work: (client: pg.PoolClient) => Promise<T>) => Promise<T>

/**
 * Takes the endpoint's row lock that conflicts with a batch's KEY SHARE, so that the
 * statements after it see every delivery a batch added for this endpoint, and batches
 * after it see the endpoint as this transaction leaves it.
 */
export async function lockEndpoint (client: pg.PoolClient, id: string): Promise<boolean> {
  return (await client.query('SELECT FROM webhook_endpoints WHERE id = $1 FOR UPDATE', [id])).rowCount === 1
}

export async function stopPending (client: pg.PoolClient, endpoint: string, why: string): Promise<void> {
  await client.query(`UPDATE webhook_deliveries SET status = 'failed', last_error = $2, next_attempt_at = NULL, lease_owner = NULL, lease_until = NULL
    WHERE endpoint_id = $1 AND status = 'pending'`, [endpoint, why])
}

// Prune in chunks, so that a long backlog never makes one long transaction.
const PRUNE_CHUNK = 500

interface ClaimRow { id: string, endpoint_id: string, url: string, secret: string, previous_secret: string | null, overlapping: boolean, body: string, attempts: number }

/** The outbox's statements: the batch insert that fills it, and the sender's claim, release and prune (finish.ts records outcomes). */
export function outboxQueries (query: Query, transaction: Transaction, instance: string) {
  return {
    /** Inserts a batch of new plants with their events and deliveries; the ids inserted, and whether any delivery was added. */
    async insert (plants: PlantRecord[], write: Query): Promise<{ created: string[], delivered: boolean }> {
      const { rows } = await write<{ id: string, notified: string }>('plant-store-insert-outbox', INSERT, [`[${plants.map(stringifyNewPlant).join(',')}]`, instance])
      return { created: rows.map((row) => row.id), delivered: rows.some((row) => row.notified !== '0') }
    },

    async claim (owner: string, limit: number, leaseMs: number, options?: ClaimOptions): Promise<ClaimedDelivery[]> {
      const { rows } = await query<ClaimRow>(undefined, CLAIM, [owner, limit, leaseMs, options?.exclude ?? []])
      return rows.map((row) => ({
        id: row.id, endpointId: row.endpoint_id, url: row.url, secrets: activeSecrets(row.secret, row.previous_secret, row.overlapping), body: row.body, attempts: row.attempts
      }))
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
          return rows.length
        })
      }
      return total
    }
  }
}
