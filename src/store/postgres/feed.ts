import type { EventFeed, FeedPage } from '../feed-types.js'
import { ALL_TYPES, FEED_PRUNE_CHUNK, feedEvent, newFloor, nextPosition, TYPE_BIT } from '../feed-common.js'
import type { Transaction } from './outbox.js'
import type { Query } from './query.js'

// A page, the floor and the end in one statement, hence one snapshot.
const page = (filtered: boolean): string => `WITH bounds AS (
    SELECT floor, greatest(floor, coalesce((SELECT max(id) FROM webhook_events), 0)) AS last FROM webhook_feed
  ), page AS (
    SELECT id, type, body, created_at FROM webhook_events
    WHERE id > greatest($1::bigint, (SELECT floor FROM bounds))${filtered ? ` AND ${TYPE_BIT} & $3 <> 0` : ''}
    ORDER BY id LIMIT $2
  )
  SELECT b.floor, b.last, p.id, p.type, p.body, (extract(epoch FROM p.created_at) * 1000)::bigint AS at
  FROM bounds b LEFT JOIN page p ON true ORDER BY p.id`
const PAGE = page(false)
const FILTERED_PAGE = page(true)
const END = 'SELECT floor, greatest(floor, coalesce((SELECT max(id) FROM webhook_events), 0)) AS last FROM webhook_feed'

// The floor moves up to the last old event of a chunk.
const FLOOR = 'SELECT floor FROM webhook_feed FOR UPDATE'
const CHUNK = 'SELECT id, created_at < $3 AS old FROM webhook_events WHERE id > $1 ORDER BY id LIMIT $2'
const RAISE = 'UPDATE webhook_feed SET floor = $1'
const DROP = `DELETE FROM webhook_events e WHERE e.id <= $1 AND e.id >= $2 AND e.fanout IS NULL
  AND e.id < (SELECT max(id) FROM webhook_events) AND NOT EXISTS (SELECT FROM webhook_deliveries d WHERE d.event_id = e.id)`

interface PageRow { floor: string, last: string, id: string | null, type: string, body: string, at: string }

/** The statement that sets the feed on (a floor left by a store with the feed off moves to the current end) or off, when a store opens. */
export function switchFeed (on: boolean): string {
  return on
    ? 'UPDATE webhook_feed SET floor = (SELECT coalesce(max(id), 0) FROM webhook_events) WHERE floor = 9223372036854775807'
    : 'UPDATE webhook_feed SET floor = 9223372036854775807'
}

/** The change feed on PostgreSQL. `onCommit` is the outbox's notification (LISTEN/NOTIFY across instances). */
export function postgresFeed (read: Query, transaction: Transaction, onCommit: (listener: () => void) => () => void): EventFeed {
  return {
    async read ({ after, limit, types }): Promise<FeedPage> {
      const filtered = (types & ALL_TYPES) !== ALL_TYPES
      const values: unknown[] = [after === undefined ? null : String(after), limit]
      if (filtered) values.push(types)
      const { rows } = await read<PageRow>(filtered ? 'plant-store-feed-filtered' : 'plant-store-feed', filtered ? FILTERED_PAGE : PAGE, values)
      const floor = BigInt(rows[0].floor)
      const events = rows[0].id === null ? [] : rows.map((row) => feedEvent(BigInt(row.id as string), row.type, Number(row.at), row.body))
      const start = after !== undefined && after > floor ? after : floor
      return { events, floor, next: nextPosition(events, limit, start, BigInt(rows[0].last)) }
    },

    async end () {
      const { rows } = await read<{ floor: string, last: string }>('plant-store-feed-end', END)
      return { end: BigInt(rows[0].last), floor: BigInt(rows[0].floor) }
    },

    onCommit,

    async prune (before) {
      let total = 0
      for (let more = true; more;) {
        more = await transaction(async (client) => {
          const [{ floor: from }] = (await client.query<{ floor: string }>(FLOOR)).rows
          const { rows } = await client.query<{ id: string, old: boolean }>(CHUNK, [from, FEED_PRUNE_CHUNK, before])
          const floor = newFloor(rows.map((row) => ({ id: BigInt(row.id), old: row.old })))
          if (floor === undefined) return false
          await client.query(RAISE, [String(floor)])
          const dropped = await client.query(DROP, [String(floor), from])
          total += dropped.rowCount as number
          return rows.length === FEED_PRUNE_CHUNK && floor === BigInt(rows[rows.length - 1].id)
        })
      }
      return total
    }
  }
}
