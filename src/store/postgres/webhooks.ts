import { randomUUID } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import { deliveryListeners, eventMask, newEndpointId, STOPPED, toDelivery, toEndpoint, type DeliveryRow, type EndpointRow } from '../webhook-common.js'
import { EndpointLimitError, type WebhookStore } from '../webhook-types.js'
import { finishQueries } from './finish.js'
import { CHANNEL, listen } from './listen.js'
import { FEED_ONLY, lockEndpoint, ORPHANS, outboxQueries, resubscribe, stopPending, type Transaction } from './outbox.js'
import type { Query } from './query.js'

const ENDPOINT_COLUMNS = 'id, url, description, events, enabled, created_at, disabled_at, disabled_reason'
const DELIVERIES = `SELECT d.id, e.type, e.plant_id, d.status, d.attempts, d.last_status, d.last_error, d.next_attempt_at, d.created_at
  FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE d.endpoint_id = $1`
/** An endpoint's deliveries, newest first, by key (test/src/store/webhook-plans.test.ts). */
export const PAGES = {
  first: `${DELIVERIES} ORDER BY d.created_at DESC, d.id DESC LIMIT $2`,
  next: `${DELIVERIES} AND (d.created_at, d.id) < ($3, $4) ORDER BY d.created_at DESC, d.id DESC LIMIT $2`
}
const ENDPOINTS = `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints`
/** The endpoints, oldest first, by key (webhook_endpoints_created). */
const ENDPOINT_PAGES = {
  all: `${ENDPOINTS} ORDER BY created_at, id`,
  first: `${ENDPOINTS} ORDER BY created_at, id LIMIT $1`,
  next: `${ENDPOINTS} WHERE (created_at, id) > ($2, $3) ORDER BY created_at, id LIMIT $1`
}
// Creations take turns on this lock, so that each counts the endpoints the one before it committed.
const CREATE_LOCK = "SELECT pg_advisory_xact_lock(hashtext('plant-store:webhook-endpoints'))"
const CREATE = `INSERT INTO webhook_endpoints (id, url, description, events, enabled, secret)
  SELECT $1, $2, $3, $4, true, $5 WHERE $6::integer IS NULL OR (SELECT count(*) FROM webhook_endpoints) < $6::integer RETURNING ${ENDPOINT_COLUMNS}`

export interface PostgresWebhooksOptions {
  url: string
  timeout: number
  log: Pick<FastifyBaseLogger, 'info' | 'warn'>
  /** The key the list cursors are authenticated with (WebhookStore.cursorKey). */
  cursorKey: Buffer
  /** Statements that write. */
  query: Query
  /** Statements that only read (endpoints, deliveries, the backlog). */
  read: Query
  transaction: Transaction
  /** Whether the change feed is on: every change then writes its event. */
  feed?: boolean
}

/** The webhook half of the PostgreSQL store, and the outbox insert that a batch of creates runs. */
export function postgresWebhooks ({ url, timeout, log, cursorKey, query, read, transaction, feed = false }: PostgresWebhooksOptions) {
  // Names this store's notifications, so that it does not wake its own listeners twice.
  const instance = randomUUID()
  const outbox = outboxQueries(query, transaction, instance, feed)
  const { finish } = finishQueries(query, transaction)
  // The senders': deliveries to make. The feed's: events committed, here or on another instance.
  const listeners = deliveryListeners()
  const commits = deliveryListeners()
  const heard = (deliveries: boolean): void => {
    commits.call()
    if (deliveries) listeners.call()
  }
  let listener: ReturnType<typeof listen> | undefined
  // The LISTEN connection opens with the first listener: a store that sends nothing needs none.
  const listening = (): void => {
    listener ??= listen({
      url,
      timeout,
      log,
      notified: (payload) => { if (!payload.startsWith(instance)) heard(!payload.endsWith(FEED_ONLY)) },
      reconnected: () => heard(true)
    })
  }

  const store: WebhookStore = {
    cursorKey,

    async createEndpoint ({ url, description, events, secret }, limit) {
      return await transaction(async (client) => {
        // The count and the insert as one step, with many instances on one database too.
        if (limit !== undefined) await client.query(CREATE_LOCK)
        const { rows } = await client.query<EndpointRow>(CREATE, [newEndpointId(), url, description ?? null, eventMask(events), secret, limit ?? null])
        if (rows.length === 0) throw new EndpointLimitError(limit as number)
        await resubscribe(client, rows[0].id)
        return toEndpoint(rows[0])
      })
    },

    async listEndpoints (page) {
      const { rows } = page === undefined
        ? await read<EndpointRow>('plant-store-webhooks-list', ENDPOINT_PAGES.all)
        : page.after === undefined
          ? await read<EndpointRow>('plant-store-webhooks-first', ENDPOINT_PAGES.first, [page.limit])
          : await read<EndpointRow>('plant-store-webhooks-next', ENDPOINT_PAGES.next, [page.limit, page.after.createdAt, page.after.id])
      return rows.map(toEndpoint)
    },

    async getEndpoint (id) {
      const { rows } = await read<EndpointRow>('plant-store-webhooks-get', `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1`, [id])
      return rows.length === 0 ? undefined : toEndpoint(rows[0])
    },

    async updateEndpoint (id, patch) {
      return await transaction(async (client) => {
        const disabling = patch.enabled === false
        if (disabling && !await lockEndpoint(client, id)) return undefined
        const { rows } = await client.query<EndpointRow>(`UPDATE webhook_endpoints SET url = coalesce($2, url),
          description = coalesce($3, description), enabled = coalesce($4, enabled), events = CASE WHEN $5 THEN $6 ELSE events END,
          failing_since = CASE WHEN $4 IS NULL THEN failing_since END, disabled_at = CASE WHEN $4 IS NULL THEN disabled_at END,
          disabled_reason = CASE WHEN $4 IS NULL THEN disabled_reason END
          WHERE id = $1 RETURNING ${ENDPOINT_COLUMNS}`,
        [id, patch.url ?? null, patch.description ?? null, patch.enabled ?? null, patch.events !== undefined, eventMask(patch.events)])
        if (rows.length === 0) return undefined
        if (disabling) await stopPending(client, id, STOPPED.disabled)
        if (patch.enabled !== undefined || patch.events !== undefined) await resubscribe(client, id)
        return toEndpoint(rows[0])
      })
    },

    async deleteEndpoint (id) {
      return await transaction(async (client) => {
        // The DELETE takes the row lock; the next statement then sees every delivery of the endpoint.
        if ((await client.query('DELETE FROM webhook_endpoints WHERE id = $1', [id])).rowCount === 0) return false
        const { rows } = await client.query<{ event_id: string }>('DELETE FROM webhook_deliveries WHERE endpoint_id = $1 RETURNING event_id', [id])
        await client.query(ORPHANS, [[...new Set(rows.map((row) => row.event_id))]])
        await resubscribe(client, id, true)
        return true
      })
    },

    async rotateSecret (id, secret, overlapUntil) {
      const result = await query('plant-store-webhooks-rotate', `UPDATE webhook_endpoints
        SET previous_secret = secret, previous_secret_until = $3, secret = $2 WHERE id = $1 RETURNING 1`, [id, secret, overlapUntil])
      return result.rows.length === 1
    },

    async listDeliveries (endpoint, { limit, before }) {
      if (await store.getEndpoint(endpoint) === undefined) return undefined
      const { rows } = before === undefined
        ? await read<DeliveryRow>('plant-store-webhooks-deliveries', PAGES.first, [endpoint, limit])
        : await read<DeliveryRow>('plant-store-webhooks-deliveries-next', PAGES.next, [endpoint, limit, before.createdAt, before.id])
      return rows.map(toDelivery)
    },

    async retryDelivery (endpoint, id) {
      const { rows } = await query('plant-store-webhooks-retry', `WITH retried AS (
          UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now(), lease_owner = NULL, lease_until = NULL, finished_at = NULL
          WHERE id = $1 AND endpoint_id = $2 RETURNING 1
        )
        SELECT pg_notify('${CHANNEL}', $3) FROM retried`, [id, endpoint, instance])
      if (rows.length === 0) return false
      listeners.call()
      return true
    },

    async backlog () {
      const { rows } = await read<{ pending: number, oldest: Date | null }>('plant-store-webhooks-backlog',
        "SELECT count(*)::int AS pending, min(created_at) AS oldest FROM webhook_deliveries WHERE status = 'pending'", [])
      const [{ pending, oldest }] = rows
      return oldest === null ? { pending } : { pending, oldest }
    },

    expand: outbox.expand,

    claim: outbox.claim,
    finish,
    renew: outbox.renew,
    disableFailing: outbox.disableFailing,
    release: outbox.release,
    prune: outbox.prune,

    onDeliveries (callback) {
      listening()
      return listeners.add(callback)
    }
  }

  return {
    store,

    /** Inserts a batch of new plants with the outbox rows; the ids inserted. */
    async insert (plants: Parameters<typeof outbox.insert>[0], write: Query): Promise<string[]> {
      const { created, notified } = await outbox.insert(plants, write)
      // The statement has committed: the events can be expanded now.
      if (notified !== null) heard(notified)
      return created
    },

    /** For the updates and deletes of a batch. */
    notice: { instance, notified: heard, feed },

    /** Calls `callback` after each commit that wrote events, of this instance or another. */
    onCommits (callback: () => void): () => void {
      listening()
      return commits.add(callback)
    },

    async close (): Promise<void> {
      await listener?.stop()
    }
  }
}
