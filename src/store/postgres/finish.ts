import { DISABLED, outcomeColumns, STOPPED } from '../webhook-common.js'
import type { AttemptOutcome } from '../webhook-types.js'
import { lockEndpoint, resubscribe, stopPending, type Transaction } from './outbox.js'
import type { Query } from './query.js'

// Each row: an attempt's outcome, recorded only while its owner still holds the lease.
export const FINISH = `UPDATE webhook_deliveries d SET status = f.status, attempts = d.attempts + 1, last_status = f.last_status,
    last_error = f.last_error, next_attempt_at = f.next, lease_owner = NULL, lease_until = NULL,
    finished_at = CASE WHEN f.status = 'pending' THEN NULL ELSE now() END
  FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::timestamptz[]) AS f (id, owner, status, last_status, last_error, next)
  WHERE d.id = ANY($1::text[]) AND d.id = f.id AND d.lease_owner = f.owner AND ARRAY[d.endpoint_id] <@ ARRAY(
    SELECT e.id FROM webhook_endpoints e WHERE e.id = ANY(ARRAY(SELECT endpoint_id FROM webhook_deliveries WHERE id = ANY($1::text[])))
    FOR KEY SHARE OF e
  ) RETURNING d.endpoint_id, f.status <> 'succeeded' AS failed`

// Since its last success: an endpoint with a success among the outcomes is cleared.
const FAILING = `WITH outcome AS (
    SELECT endpoint_id, bool_and(failed) AS failed FROM unnest($1::text[], $2::boolean[]) AS o (endpoint_id, failed) GROUP BY endpoint_id
  ), changing AS (
    SELECT e.id, o.failed FROM webhook_endpoints e JOIN outcome o ON o.endpoint_id = e.id
    WHERE (e.failing_since IS NULL) = o.failed ORDER BY e.id FOR NO KEY UPDATE OF e
  )
  UPDATE webhook_endpoints e SET failing_since = CASE WHEN c.failed THEN now() END FROM changing c WHERE e.id = c.id`

// Bounds a statement's size (its parameters) and the rows it holds locked at once.
const MAX_ROWS = 500

interface Finish { owner: string, id: string, outcome: AttemptOutcome }

interface Waiting extends Finish { resolve: () => void, reject: (error: unknown) => void }

function values (finishes: Finish[]): unknown[] {
  const columns = finishes.map(({ outcome }) => outcomeColumns(outcome))
  return [
    finishes.map((f) => f.id), finishes.map((f) => f.owner), columns.map((c) => c.status),
    columns.map((c) => c.lastStatus), columns.map((c) => c.lastError), columns.map((c) => c.next)
  ]
}

/** The sender's outcomes: those recorded in one turn of the event loop share one statement. */
export function finishQueries (query: Query, transaction: Transaction) {
  let turn: Waiting[] = []
  let writing = false

  function next (): void {
    if (writing || turn.length === 0) return
    const batch = turn
    turn = []
    writing = true
    // flush settles each of its callers; the next batch goes whatever became of this one.
    const done = (): void => {
      writing = false
      next()
    }
    flush(batch).then(done, done)
  }

  // A 410 disables its endpoint and stops its pending deliveries, in a transaction of its own.
  async function gone (finish: Finish): Promise<void> {
    await transaction(async (client) => {
      const { rows } = await client.query<{ endpoint_id: string }>('SELECT endpoint_id FROM webhook_deliveries WHERE id = $1', [finish.id])
      if (rows.length === 0) return
      const endpoint = rows[0].endpoint_id
      // The endpoint first, then its deliveries: the order every writer takes them in.
      await lockEndpoint(client, endpoint)
      if ((await client.query(FINISH, values([finish]))).rowCount === 0) return
      await client.query('UPDATE webhook_endpoints SET enabled = false, disabled_at = now(), disabled_reason = $2, failing_since = NULL WHERE id = $1', [endpoint, DISABLED.gone])
      await stopPending(client, endpoint, STOPPED.gone)
      await resubscribe(client, endpoint)
    })
  }

  async function failing ({ rows }: { rows: Array<{ endpoint_id: string, failed: boolean }> }): Promise<void> {
    if (rows.length > 0) await query(undefined, FAILING, [rows.map((row) => row.endpoint_id), rows.map((row) => row.failed)])
  }

  async function send (batch: Waiting[], write: Promise<void>): Promise<void> {
    try {
      await write
    } catch (error) {
      for (const waiting of batch) waiting.reject(error)
      return
    }
    for (const waiting of batch) waiting.resolve()
  }

  // In arrival order, as one at a time would land.
  async function flush (batch: Waiting[]): Promise<void> {
    let rows: Waiting[] = []
    let ids = new Set<string>()
    const sendRows = async () => {
      if (rows.length > 0) await send(rows, query<{ endpoint_id: string, failed: boolean }>(undefined, FINISH, values(rows)).then(failing))
      rows = []
      ids = new Set()
    }
    for (const finish of batch) {
      if (finish.outcome.result === 'gone') {
        await sendRows()
        await send([finish], gone(finish))
        continue
      }
      if (rows.length === MAX_ROWS || ids.has(finish.id)) await sendRows()
      rows.push(finish)
      ids.add(finish.id)
    }
    await sendRows()
  }

  return {
    finish (owner: string, id: string, outcome: AttemptOutcome): Promise<void> {
      return new Promise((resolve, reject) => {
        // setImmediate runs after the poll phase: every attempt answered in this turn joins the batch.
        if (turn.push({ owner, id, outcome, resolve, reject }) === 1 && !writing) setImmediate(next)
      })
    }
  }
}
