import type Database from 'better-sqlite3'
import { deletedData, stringifyNewPlant } from '../new-plant-json.js'
import type { PlantRecord } from '../types.js'
import { activeSecrets, DISABLED, deliveryBody, deliveryListeners, eventMask, newEndpointId, outcomeColumns, STOPPED, toDelivery, toEndpoint, type DeliveryRow, type EndpointRow } from '../webhook-common.js'
import { EndpointLimitError, type AttemptOutcome, type ClaimedDelivery, type EndpointPage, type EndpointPatch, type NewEndpoint, type WebhookEventType, type WebhookStore } from '../webhook-types.js'
import { sqliteOutbox } from './outbox.js'

/** Runs a write against the database, turning "cannot answer now" errors into StoreUnavailableError. */
export type Run = <T>(work: () => T, wrote?: (result: T) => boolean) => T

/** Runs a read against the database: it ends no write outage, and one it meets is a read outage. */
export type Read = <T>(work: () => T) => T

const ENDPOINT_COLUMNS = 'id, url, description, events, enabled, created_at, disabled_at, disabled_reason'
const ENDPOINT = `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints`
const DELIVERY = `SELECT d.id, e.type, e.plant_id, d.status, d.attempts, d.last_status, d.last_error, d.next_attempt_at, d.created_at
  FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE d.endpoint_id = @endpoint`

/** The statements that must stay served by an index (test/src/store/webhook-plans.test.ts). */
export const PLANNED = {
  firstPage: `${DELIVERY} ORDER BY d.created_at DESC, d.id DESC LIMIT @limit`,
  nextPage: `${DELIVERY} AND (d.created_at, d.id) < (@createdAt, @id) ORDER BY d.created_at DESC, d.id DESC LIMIT @limit`,
  // The lease moves next_attempt_at to its end: a lease that lapses makes the delivery due again by itself.
  claim: `UPDATE webhook_deliveries SET lease_owner = @owner, lease_until = @until, next_attempt_at = @until
    WHERE id IN (SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
      WHERE d.status = 'pending' AND d.next_attempt_at <= @now AND e.enabled = 1
        AND d.endpoint_id NOT IN (SELECT value FROM json_each(@exclude)) ORDER BY d.next_attempt_at LIMIT @limit)
    RETURNING id`,
  prune: `DELETE FROM webhook_deliveries WHERE rowid IN
    (SELECT rowid FROM webhook_deliveries WHERE status <> 'pending' AND finished_at < ? LIMIT ?) RETURNING event_id`,
  // Events that lost their last delivery go with it, once expanded.
  orphan: `DELETE FROM webhook_events WHERE id = ? AND fanout IS NULL AND id < (SELECT floor FROM webhook_feed)
    AND NOT EXISTS (SELECT 1 FROM webhook_deliveries WHERE event_id = ?)`
}

// Prune in chunks, so that a long backlog never holds the write lock (and the event loop) for long.
const PRUNE_CHUNK = 500

interface Finish { owner: string, id: string, outcome: AttemptOutcome }

interface ClaimRow {
  id: string,
  endpoint_id: string,
  url: string,
  secret: string,
  previous_secret: string | null,
  previous_secret_until: number | null,
  standard: number,
  type: string,
  at: number,
  body: string,
  attempts: number
}

/**
 * The webhook half of the SQLite store, and the outbox hook that a change calls inside its batch's
 * transaction.
 */
export function sqliteWebhooks (db: Database.Database, cursorKey: Buffer, run: Run, read: Read, feed = false) {
  const outbox = sqliteOutbox(db)
  const sql = {
    // The count and the insert in one statement: SQLite runs one writer at a time.
    insertEndpoint: db.prepare<Record<string, unknown>, EndpointRow>(`INSERT INTO webhook_endpoints (id, url, description, events, enabled, secret, created_at)
      SELECT @id, @url, @description, @events, 1, @secret, @now WHERE @limit IS NULL OR (SELECT count(*) FROM webhook_endpoints) < @limit
      RETURNING ${ENDPOINT_COLUMNS}`),
    endpoints: db.prepare<[], EndpointRow>(`${ENDPOINT} ORDER BY created_at, id`),
    firstEndpoints: db.prepare<[number], EndpointRow>(`${ENDPOINT} ORDER BY created_at, id LIMIT ?`),
    nextEndpoints: db.prepare<[number, string, number], EndpointRow>(`${ENDPOINT} WHERE (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?`),
    endpoint: db.prepare<[string], EndpointRow>(`${ENDPOINT} WHERE id = ?`),
    update: db.prepare<Record<string, unknown>, EndpointRow>(`UPDATE webhook_endpoints SET url = coalesce(@url, url),
      description = coalesce(@description, description), enabled = coalesce(@enabled, enabled),
      failing_since = CASE WHEN @enabled IS NULL THEN failing_since END, disabled_at = CASE WHEN @enabled IS NULL THEN disabled_at END,
      disabled_reason = CASE WHEN @enabled IS NULL THEN disabled_reason END,
      events = CASE WHEN @setEvents THEN @events ELSE events END
      WHERE id = @id RETURNING ${ENDPOINT_COLUMNS}`),
    stop: db.prepare(`UPDATE webhook_deliveries SET status = 'failed', last_error = @why, next_attempt_at = NULL, lease_owner = NULL, lease_until = NULL,
      finished_at = @now WHERE endpoint_id = @endpoint AND status = 'pending'`),
    disable: db.prepare<Record<string, unknown>>('UPDATE webhook_endpoints SET enabled = 0, disabled_at = @now, disabled_reason = @why WHERE id = @id'),
    disableFailing: db.prepare<Record<string, unknown>, string>(`UPDATE webhook_endpoints SET enabled = 0, disabled_at = @now, disabled_reason = @why
      WHERE enabled = 1 AND failing_since <= @before RETURNING id`).pluck(),
    // Since its last success: a success clears it, the first failure after one sets it.
    failing: db.prepare<Record<string, unknown>>(`UPDATE webhook_endpoints SET failing_since = CASE WHEN @failed THEN @now END
      WHERE id = @id AND (failing_since IS NULL) = @failed`),
    deleteEndpoint: db.prepare<[string]>('DELETE FROM webhook_endpoints WHERE id = ?'),
    deleteDeliveries: db.prepare<[string], number>('DELETE FROM webhook_deliveries WHERE endpoint_id = ? RETURNING event_id').pluck(),
    orphan: db.prepare(PLANNED.orphan),
    rotate: db.prepare(`UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_until = @until, secret = @secret
      WHERE id = @id`),
    firstPage: db.prepare<Record<string, unknown>, DeliveryRow>(PLANNED.firstPage).safeIntegers(true),
    nextPage: db.prepare<Record<string, unknown>, DeliveryRow>(PLANNED.nextPage).safeIntegers(true),
    retry: db.prepare(`UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = @now, lease_owner = NULL, lease_until = NULL, finished_at = NULL
      WHERE id = @id AND endpoint_id = @endpoint`),
    claim: db.prepare<Record<string, unknown>, { id: string }>(PLANNED.claim),
    claimed: db.prepare<[string], ClaimRow>(`SELECT d.id, d.endpoint_id, e.url, e.secret, e.previous_secret, e.previous_secret_until,
      d.standard, v.type, v.created_at AS at, v.body, d.attempts
      FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id JOIN webhook_events v ON v.id = d.event_id WHERE d.id = ?`),
    finish: db.prepare<Record<string, unknown>, { endpoint_id: string }>(`UPDATE webhook_deliveries SET status = @status, attempts = attempts + 1,
      last_status = @lastStatus, last_error = @lastError, next_attempt_at = @next, lease_owner = NULL, lease_until = NULL,
      finished_at = CASE WHEN @status = 'pending' THEN NULL ELSE @now END WHERE id = @id AND lease_owner = @owner AND status = 'pending' RETURNING endpoint_id`),
    renew: db.prepare(`UPDATE webhook_deliveries SET lease_until = @until, next_attempt_at = @until
      WHERE id IN (SELECT value FROM json_each(@ids)) AND lease_owner = @owner AND status = 'pending'`),
    release: db.prepare(`UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL, next_attempt_at = @now
      WHERE lease_owner = @owner AND status = 'pending'`),
    prune: db.prepare<[number, number], number>(PLANNED.prune).pluck(),
    backlog: db.prepare<[], { pending: number, oldest: number | null }>("SELECT count(*) AS pending, min(created_at) AS oldest FROM webhook_deliveries WHERE status = 'pending'")
  }

  // The sender's listeners, and the feed's (events only the feed receives wake no sender).
  const listeners = deliveryListeners()
  const commits = deliveryListeners()
  let waking = false
  let toSender = false

  function stopPending (endpoint: string, why: string): void {
    sql.stop.run({ endpoint, why, now: Date.now() })
  }

  // Every change of endpoints goes through here, on the store's one connection.
  const transaction = <A extends unknown[], T>(work: (...args: A) => T, wrote?: (result: T) => boolean) => {
    const inTransaction = db.transaction(work)
    return (...args: A): T => {
      let committed = false
      try {
        const result = run(() => inTransaction.immediate(...args), wrote)
        committed = true
        return result
      } finally {
        outbox.settle(committed)
      }
    }
  }

  const insert = transaction(({ url, description, events, secret }: NewEndpoint, limit?: number) => {
    const row = sql.insertEndpoint.get({ id: newEndpointId(), url, description: description ?? null, events: eventMask(events), secret, now: Date.now(), limit: limit ?? null })
    if (row !== undefined) outbox.resubscribe(row.id)
    return row
  })

  const update = transaction((id: string, patch: EndpointPatch) => {
    const row = sql.update.get({
      id,
      url: patch.url ?? null,
      description: patch.description ?? null,
      enabled: patch.enabled === undefined ? null : Number(patch.enabled),
      setEvents: Number(patch.events !== undefined),
      events: eventMask(patch.events)
    })
    if (row === undefined) return row
    if (patch.enabled === false) stopPending(id, STOPPED.disabled)
    if (patch.enabled !== undefined || patch.events !== undefined) outbox.resubscribe(id)
    return row
  })

  const remove = transaction((id: string) => {
    if (sql.deleteEndpoint.run(id).changes === 0) return false
    for (const event of new Set(sql.deleteDeliveries.all(id))) sql.orphan.run(event, event)
    outbox.resubscribe(id, true)
    return true
  })

  const expand = transaction((limit: number) => outbox.expand(limit), (expansion) => expansion.deliveries > 0)

  const claim = transaction((owner: string, limit: number, leaseMs: number, exclude: readonly string[]): ClaimedDelivery[] => {
    const now = Date.now()
    const leased = sql.claim.all({ owner, limit, now, until: now + leaseMs, exclude: JSON.stringify(exclude) })
    return leased.map(({ id }) => {
      const row = sql.claimed.get(id) as ClaimRow
      return {
        id,
        endpointId: row.endpoint_id,
        url: row.url,
        secrets: activeSecrets(row.secret, row.previous_secret, (row.previous_secret_until ?? 0) > now),
        body: deliveryBody(row.standard, row.type, row.at, row.body),
        attempts: row.attempts
      }
    })
  }, (claimed) => claimed.length > 0)

  const finishAll = transaction((finishes: Finish[]) => {
    const now = Date.now()
    for (const { owner, id, outcome } of finishes) {
      const { next, ...columns } = outcomeColumns(outcome)
      const row = sql.finish.get({ id, owner, ...columns, next: next?.getTime() ?? null, now })
      if (row === undefined) continue
      sql.failing.run({ id: row.endpoint_id, failed: Number(outcome.result !== 'succeeded'), now })
      if (outcome.result === 'gone') {
        sql.disable.run({ id: row.endpoint_id, why: DISABLED.gone, now })
        stopPending(row.endpoint_id, STOPPED.gone)
        outbox.resubscribe(row.endpoint_id)
      }
    }
  })

  // Every endpoint failing since `before` is disabled, and its pending deliveries stop.
  const disableFailing = transaction((before: number): number => {
    const ids = sql.disableFailing.all({ before, why: DISABLED.failing, now: Date.now() })
    for (const id of ids) {
      stopPending(id, STOPPED.disabled)
      outbox.resubscribe(id)
    }
    return ids.length
  }, (count) => count > 0)

  // The outcomes recorded in one turn of the event loop share one transaction.
  let finishing: Array<Finish & { done: (error?: unknown) => void }> = []
  function finish (owner: string, id: string, outcome: AttemptOutcome): Promise<void> {
    return new Promise((resolve, reject) => {
      if (finishing.length === 0) {
        setImmediate(() => {
          const batch = finishing
          finishing = []
          try {
            finishAll(batch)
          } catch (error) {
            for (const { done } of batch) done(error)
            return
          }
          for (const { done } of batch) done()
        })
      }
      finishing.push({ owner, id, outcome, done: (error) => error === undefined ? resolve() : reject(error) })
    })
  }

  const pruneChunk = transaction((before: number): number => {
    const events = sql.prune.all(before, PRUNE_CHUNK)
    for (const event of new Set(events)) sql.orphan.run(event, event)
    if (events.length < PRUNE_CHUNK) outbox.prune()
    return events.length
  })

  const store: WebhookStore = {
    cursorKey,

    async createEndpoint (endpoint: NewEndpoint, limit?: number) {
      const row = insert(endpoint, limit)
      if (row === undefined) throw new EndpointLimitError(limit as number)
      return toEndpoint(row)
    },

    async listEndpoints (page?: EndpointPage) {
      const rows = read(() => page === undefined
        ? sql.endpoints.all()
        : page.after === undefined
          ? sql.firstEndpoints.all(page.limit)
          : sql.nextEndpoints.all(page.after.createdAt.getTime(), page.after.id, page.limit))
      return rows.map(toEndpoint)
    },

    async getEndpoint (id) {
      const row = read(() => sql.endpoint.get(id))
      return row === undefined ? undefined : toEndpoint(row)
    },

    async updateEndpoint (id, patch) {
      const row = update(id, patch)
      return row === undefined ? undefined : toEndpoint(row)
    },

    async deleteEndpoint (id) {
      return remove(id)
    },

    async rotateSecret (id, secret, overlapUntil) {
      return run(() => sql.rotate.run({ id, secret, until: overlapUntil.getTime() })).changes === 1
    },

    async backlog () {
      const { pending, oldest } = read(() => sql.backlog.get() as { pending: number, oldest: number | null })
      return oldest === null ? { pending } : { pending, oldest: new Date(oldest) }
    },

    async listDeliveries (endpoint, { limit, before }) {
      if (read(() => sql.endpoint.get(endpoint)) === undefined) return undefined
      const rows = read(() => before === undefined
        ? sql.firstPage.all({ endpoint, limit })
        : sql.nextPage.all({ endpoint, limit, createdAt: before.createdAt.getTime(), id: before.id }))
      return rows.map(toDelivery)
    },

    async retryDelivery (endpoint, id) {
      const retried = run(() => sql.retry.run({ id, endpoint, now: Date.now() })).changes === 1
      if (retried) listeners.call()
      return retried
    },

    expand: async (limit) => expand(limit),

    async claim (owner, limit, leaseMs, options) {
      return claim(owner, limit, leaseMs, options?.exclude ?? [])
    },

    async finish (owner, id, outcome) {
      await finish(owner, id, outcome)
    },

    async renew (owner, ids, leaseMs) {
      const until = Date.now() + leaseMs
      run(() => sql.renew.run({ owner, until, ids: JSON.stringify(ids) }))
    },

    async disableFailing (since) {
      return disableFailing(since.getTime())
    },

    async release (owner) {
      run(() => sql.release.run({ owner, now: Date.now() }))
    },

    async prune (before) {
      let total = 0
      for (let pruned = PRUNE_CHUNK; pruned === PRUNE_CHUNK; total += pruned) {
        // Between chunks, requests (and their writes) take their turn.
        if (total > 0) await new Promise((resolve) => setImmediate(resolve))
        pruned = pruneChunk(before.getTime())
      }
      return total
    },

    onDeliveries (listener) {
      return listeners.add(listener)
    }
  }

  return {
    store,

    /** Called by a change, inside its batch's transaction. */
    changed (type: WebhookEventType, plant: PlantRecord | { id: bigint }): void {
      // The JSON is made only when an event is written: no endpoint and no change feed, no cost.
      const received = outbox.receives(type)
      if (!received && !feed) return
      outbox.write(type, plant.id, 'name' in plant ? stringifyNewPlant(plant) : deletedData(plant.id), Date.now(), received)
      toSender ||= received
      if (waking) return
      waking = true
      process.nextTick(() => {
        waking = false
        commits.call()
        if (!toSender) return
        toSender = false
        listeners.call()
      })
    },

    /** Calls `listener` after each batch that wrote events. */
    onCommits (listener: () => void): () => void {
      return commits.add(listener)
    }
  }
}
