import type { Waiter } from '../group-commit.js'
import { StoreUnavailableError, toPlant, type UpdateResult, type Write, type WriteResult } from '../types.js'
import { etagSql, matchText } from './etag.js'
import { outboxEvents } from './outbox.js'
import type { Query } from './query.js'

type WriteWaiter = Waiter<Write, WriteResult>

// A run of updates in one statement, hence one transaction.
const updateStatement = (feed: boolean): string => `WITH input AS (
    SELECT x.ord, (x.e->>'id')::bigint AS id, x.e->'change' AS change, x.e->>'match' AS match, x.e->>'none' AS none
    FROM json_array_elements($1::json) WITH ORDINALITY AS x (e, ord)
  ), locked AS (
    SELECT p.id, p.name, p.tag FROM plants p WHERE p.id = ANY(ARRAY(SELECT id FROM input)) ORDER BY p.id FOR NO KEY UPDATE
  ), matched AS (
    SELECT i.ord, i.change, l.id, l.name, l.tag,
      i.none IS NOT NULL AND ${etagSql('l.name', 'l.tag')} = ANY(string_to_array(i.none, ' ')) AS refused
    FROM input i JOIN locked l ON l.id = i.id
    WHERE i.match IS NULL OR ${etagSql('l.name', 'l.tag')} = ANY(string_to_array(i.match, ' '))
  ), decided AS (
    SELECT m.ord, m.id, m.refused, n.name, n.tag, (n.name, n.tag) IS DISTINCT FROM (m.name, m.tag) AS changed
    FROM matched m
    CROSS JOIN LATERAL (SELECT CASE WHEN m.refused THEN m.name ELSE coalesce(m.change->>'name', m.name) END AS name,
      CASE WHEN m.refused OR m.change->'tag' IS NULL THEN m.tag ELSE m.change->>'tag' END AS tag) n
  ), updated AS (
    UPDATE plants p SET name = d.name, tag = d.tag FROM decided d WHERE p.id = d.id AND d.changed
    RETURNING p.id, p.name, p.tag
  ), ${outboxEvents('plant.updated', 'u.id', '\'{"id":\' || u.id || \',"name":\' || to_json(u.name)::text || coalesce(\',"tag":\' || to_json(u.tag)::text, \'\') || \'}\'', 'updated u', feed)}
  SELECT ord, name, tag, changed, refused, (SELECT deliveries FROM notified) AS notified FROM decided`
export const UPDATE = updateStatement(false)

// A run of deletes in one statement, decided as a run of updates is.
const deleteStatement = (feed: boolean): string => `WITH locked AS (
    SELECT p.id, p.name, p.tag FROM plants p WHERE p.id = ANY($1::bigint[]) ORDER BY p.id FOR UPDATE
  ), decided AS (
    SELECT l.id, i.none IS NOT NULL AND ${etagSql('l.name', 'l.tag')} = ANY(string_to_array(i.none, ' ')) AS refused
    FROM unnest($1::bigint[], $3::text[], $4::text[]) AS i (id, match, none) JOIN locked l ON l.id = i.id
    WHERE i.match IS NULL OR ${etagSql('l.name', 'l.tag')} = ANY(string_to_array(i.match, ' '))
  ), deleted AS (
    DELETE FROM plants p USING decided d WHERE p.id = d.id AND NOT d.refused
    RETURNING p.id
  ), ${outboxEvents('plant.deleted', 'd.id', '\'{"id":\' || d.id || \'}\'', 'deleted d', feed)}
  SELECT id, refused, (SELECT deliveries FROM notified) AS notified FROM decided`
export const DELETE = deleteStatement(false)
// With the change feed on: every change writes its event, in commit order (outbox.ts).
const FEED = { update: updateStatement(true), delete: deleteStatement(true) }

type Update = Write & { op: 'update' }
type Delete = Write & { op: 'delete' }

/** Sends a run of writes with `send`, which settles each of them. */
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

/**
 * What the outbox needs of a batch: the instance's name for its notifications, who to tell of events
 * committed.
 */
/** How a batch's statement tells of the events it wrote: `deliveries` when an endpoint receives one. */
export interface OutboxNotice { instance: string, notified: (deliveries: boolean) => void, feed?: boolean }

/** The statements of a batch's updates and deletes, sent through `write` (the batch's connection). */
export function changeWrites (write: Query, { instance, notified, feed = false }: OutboxNotice) {
  const [update, remove] = feed ? [FEED.update, FEED.delete] : [UPDATE, DELETE]
  const suffix = feed ? '-feed' : ''
  async function sendUpdates (run: WriteWaiter[]): Promise<void> {
    const input = run.map(({ item }) => {
      const { id, change, ifMatch, ifNoneMatch } = item as Update
      return `{"id":"${id}","change":${JSON.stringify(change)},"match":${JSON.stringify(matchText(ifMatch))},"none":${JSON.stringify(matchText(ifNoneMatch))}}`
    })
    const { rows } = await write<{ ord: string, name: string, tag: string | null, changed: boolean, refused: boolean, notified: boolean | null }>(`plant-store-update-many${suffix}`, update, [`[${input.join(',')}]`, instance])
    // The statement has committed: its events can be expanded now.
    if (rows.length > 0 && rows[0].notified !== null) notified(rows[0].notified)
    const results: Array<UpdateResult | undefined> = run.map(() => undefined)
    for (const row of rows) results[Number(row.ord) - 1] = { outcome: row.refused ? 'refused' : row.changed ? 'updated' : 'unchanged', plant: toPlant(row.name, row.tag) }
    run.forEach((waiter, i) => waiter.resolve(results[i]))
  }

  async function sendDeletes (run: WriteWaiter[]): Promise<void> {
    const sorted = run.map(({ item }) => item as Delete).sort((a, b) => (a.id < b.id ? -1 : 1))
    const { rows } = await write<{ id: string, refused: boolean, notified: boolean | null }>(`plant-store-delete-many${suffix}`, remove,
      [sorted.map(({ id }) => String(id)), instance, sorted.map(({ ifMatch }) => matchText(ifMatch)), sorted.map(({ ifNoneMatch }) => matchText(ifNoneMatch))])
    if (rows.length > 0 && rows[0].notified !== null) notified(rows[0].notified)
    const decided = new Map(rows.map((row) => [row.id, row.refused ? 'refused' as const : true]))
    for (const waiter of run) waiter.resolve(decided.get(String((waiter.item as Delete).id)) ?? false)
  }

  return {
    /** Commits a run of updates of distinct ids: one statement. */
    updateAll: (run: WriteWaiter[]) => eachAloneOnError(run, sendUpdates),
    /** Commits a run of deletes of distinct ids: one statement. */
    deleteAll: (run: WriteWaiter[]) => eachAloneOnError(run, sendDeletes)
  }
}
