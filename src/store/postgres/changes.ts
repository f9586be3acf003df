import type { Waiter } from '../group-commit.js'
import { StoreUnavailableError, toPlant, type UpdateResult, type Write, type WriteResult } from '../types.js'
import { etagSql, matchText } from './etag.js'
import { outboxEvents } from './outbox.js'
import type { Query } from './query.js'

type WriteWaiter = Waiter<Write, WriteResult>

// A run of updates in one statement, hence one transaction. Its rows are locked first, in
// ascending id order (so batches of several instances never wait on each other in a cycle),
// and read as they are once locked: the If-Match check, the merge and whether anything
// changes are decided on the row as the update finds it, not on an older snapshot. A change
// that changes nothing writes nothing, and has no event. The batch is one parameter, a JSON
// array of {id, change, match}; each id once (a run ends before an id it holds). An event's data
// is the plant after the change, built as stringifyNewPlant writes it (to_json escapes a string
// as JSON.stringify does), the id's digits exact.
const updateStatement = (feed: boolean): string => `WITH input AS (
    SELECT x.ord, (x.e->>'id')::bigint AS id, x.e->'change' AS change, x.e->>'match' AS match
    FROM json_array_elements($1::json) WITH ORDINALITY AS x (e, ord)
  ), locked AS (
    SELECT p.id, p.name, p.tag FROM plants p WHERE p.id = ANY(ARRAY(SELECT id FROM input)) ORDER BY p.id FOR NO KEY UPDATE
  ), decided AS (
    SELECT i.ord, l.id, n.name, n.tag, (n.name, n.tag) IS DISTINCT FROM (l.name, l.tag) AS changed
    FROM input i JOIN locked l ON l.id = i.id
    CROSS JOIN LATERAL (SELECT coalesce(i.change->>'name', l.name) AS name,
      CASE WHEN i.change->'tag' IS NULL THEN l.tag ELSE i.change->>'tag' END AS tag) n
    WHERE i.match IS NULL OR ${etagSql('l.name', 'l.tag')} = ANY(string_to_array(i.match, ' '))
  ), updated AS (
    UPDATE plants p SET name = d.name, tag = d.tag FROM decided d WHERE p.id = d.id AND d.changed
    RETURNING p.id, p.name, p.tag
  ), ${outboxEvents('plant.updated', 'u.id', '\'{"id":\' || u.id || \',"name":\' || to_json(u.name)::text || coalesce(\',"tag":\' || to_json(u.tag)::text, \'\') || \'}\'', 'updated u', feed)}
  SELECT ord, name, tag, changed, (SELECT count(*) FROM notified) AS notified FROM decided`
export const UPDATE = updateStatement(false)

// A run of deletes in one statement: the If-Match check is made on the row the delete finds
// (a row changed meanwhile is checked again as it now is). Ids come in ascending order, so
// that the rows are locked in that order whichever way the server joins them.
const deleteStatement = (feed: boolean): string => `WITH deleted AS (
    DELETE FROM plants p USING unnest($1::bigint[], $3::text[]) AS i (id, match)
    WHERE p.id = ANY($1::bigint[]) AND p.id = i.id AND (i.match IS NULL OR ${etagSql('p.name', 'p.tag')} = ANY(string_to_array(i.match, ' ')))
    RETURNING p.id
  ), ${outboxEvents('plant.deleted', 'd.id', '\'{"id":\' || d.id || \'}\'', 'deleted d', feed)}
  SELECT id, (SELECT count(*) FROM notified) AS notified FROM deleted`
export const DELETE = deleteStatement(false)
// With the change feed on: every change writes its event, in commit order (outbox.ts).
const FEED = { update: updateStatement(true), delete: deleteStatement(true) }

type Update = Write & { op: 'update' }
type Delete = Write & { op: 'delete' }

/**
 * Sends a run of writes with `send`, which settles each of them. A row the server refuses
 * must not fail the others: when the run fails but for an outage, each goes alone, in order.
 */
async function eachAloneOnError (run: WriteWaiter[], send: (run: WriteWaiter[]) => Promise<void>): Promise<void> {
  try {
    await send(run)
  } catch (error) {
    if (run.length === 1 || error instanceof StoreUnavailableError) {
      for (const waiter of run) waiter.reject(error)
      return
    }
    for (const waiter of run) if (waiter.waiting) await eachAloneOnError([waiter], send)
  }
}

/** What the outbox needs of a batch: the instance's name for its notifications, who to tell of events committed, and whether the change feed is on. */
export interface OutboxNotice { instance: string, notified: () => void, feed?: boolean }

/** The statements of a batch's updates and deletes, sent through `write` (the batch's connection). */
export function changeWrites (write: Query, { instance, notified, feed = false }: OutboxNotice) {
  const [update, remove] = feed ? [FEED.update, FEED.delete] : [UPDATE, DELETE]
  const suffix = feed ? '-feed' : ''
  async function sendUpdates (run: WriteWaiter[]): Promise<void> {
    const input = run.map(({ item }) => {
      const { id, change, ifMatch } = item as Update
      return `{"id":"${id}","change":${JSON.stringify(change)},"match":${JSON.stringify(matchText(ifMatch))}}`
    })
    const { rows } = await write<{ ord: string, name: string, tag: string | null, changed: boolean, notified: string }>(`plant-store-update-many${suffix}`, update, [`[${input.join(',')}]`, instance])
    // The statement has committed: its events can be expanded now.
    if (rows.some((row) => row.notified !== '0')) notified()
    const results: Array<UpdateResult | undefined> = run.map(() => undefined)
    for (const row of rows) results[Number(row.ord) - 1] = { outcome: row.changed ? 'updated' : 'unchanged', plant: toPlant(row.name, row.tag) }
    run.forEach((waiter, i) => waiter.resolve(results[i]))
  }

  async function sendDeletes (run: WriteWaiter[]): Promise<void> {
    const sorted = run.map(({ item }) => item as Delete).sort((a, b) => (a.id < b.id ? -1 : 1))
    const { rows } = await write<{ id: string, notified: string }>(`plant-store-delete-many${suffix}`, remove, [sorted.map(({ id }) => String(id)), instance, sorted.map(({ ifMatch }) => matchText(ifMatch))])
    if (rows.some((row) => row.notified !== '0')) notified()
    const deleted = new Set(rows.map((row) => row.id))
    for (const waiter of run) waiter.resolve(deleted.has(String((waiter.item as Delete).id)))
  }

  return {
    /** Commits a run of updates of distinct ids: one statement; each caller hears its plant as it now is, or undefined. */
    updateAll: (run: WriteWaiter[]) => eachAloneOnError(run, sendUpdates),
    /** Commits a run of deletes of distinct ids: one statement; each caller hears whether its plant was removed. */
    deleteAll: (run: WriteWaiter[]) => eachAloneOnError(run, sendDeletes)
  }
}
