import type Database from 'better-sqlite3'
import { FEED_OFF, type EventFeed, type FeedPage, type FeedQuery } from '../feed-types.js'
import { ALL_TYPES, FEED_PRUNE_CHUNK, feedEvent, newFloor, nextPosition, TYPE_BIT } from '../feed-common.js'
import type { Read, Run } from './webhooks.js'

type EventRow = [id: bigint, type: string, body: string, at: bigint]

// How often, in ms, the file is asked whether another process committed, while someone waits.
const POLL_MS = 20

/** Sets the feed on (a floor left by a store with the feed off moves to the current end) or off. */
export function switchFeed (db: Database.Database, on: boolean): void {
  if (on) db.prepare('UPDATE webhook_feed SET floor = (SELECT coalesce(max(id), 0) FROM webhook_events) WHERE floor = ?').run(FEED_OFF)
  else db.prepare('UPDATE webhook_feed SET floor = ?').run(FEED_OFF)
}

/** The change feed on SQLite. */
export function sqliteFeed (db: Database.Database, read: Read, write: Run, onDeliveries: (listener: () => void) => () => void): EventFeed {
  const bounds = db.prepare<[], [bigint, bigint]>('SELECT floor, max(floor, coalesce((SELECT max(id) FROM webhook_events), 0)) FROM webhook_feed').safeIntegers(true).raw(true)
  const pages = {
    all: db.prepare<[bigint, number], EventRow>('SELECT id, type, body, created_at FROM webhook_events WHERE id > ? ORDER BY id LIMIT ?'),
    filtered: db.prepare<[bigint, number, number], EventRow>(`SELECT id, type, body, created_at FROM webhook_events WHERE id > ? AND (${TYPE_BIT}) & ? <> 0 ORDER BY id LIMIT ?`)
  }
  for (const page of Object.values(pages)) page.safeIntegers(true).raw(true)
  const sql = {
    chunk: db.prepare<[number, bigint, number], [bigint, number]>('SELECT id, created_at < ? FROM webhook_events WHERE id > ? ORDER BY id LIMIT ?').safeIntegers(true).raw(true),
    raise: db.prepare<[bigint]>('UPDATE webhook_feed SET floor = ?'),
    drop: db.prepare<[bigint, bigint]>(`DELETE FROM webhook_events WHERE id <= ? AND id >= ? AND fanout IS NULL
      AND id < (SELECT max(id) FROM webhook_events) AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id)`)
  }
  const dataVersion = db.prepare('PRAGMA data_version').pluck()

  // One snapshot for the bounds and the page: a commit of another process falls before or after both.
  const readPage = db.transaction(({ after, limit, types }: FeedQuery): FeedPage => {
    const [floor, end] = bounds.get() as [bigint, bigint]
    const start = after !== undefined && after > floor ? after : floor
    const rows = (types & ALL_TYPES) === ALL_TYPES ? pages.all.all(start, limit) : pages.filtered.all(start, types, limit)
    const events = rows.map(([id, type, body, at]) => feedEvent(id, type, Number(at), body))
    return { events, floor, next: nextPosition(events, limit, start, end) }
  })

  // Whether more may follow, and how many events went.
  const pruneChunk = db.transaction((before: number): [boolean, number] => {
    const [from] = bounds.get() as [bigint, bigint]
    const rows = sql.chunk.all(before, from, FEED_PRUNE_CHUNK)
    const floor = newFloor(rows.map(([id, old]) => ({ id, old: Number(old) === 1 })))
    if (floor === undefined) return [false, 0]
    sql.raise.run(floor)
    const dropped = sql.drop.run(floor, from).changes
    return [rows.length === FEED_PRUNE_CHUNK && floor === rows[rows.length - 1][0], dropped]
  })

  const listeners = new Set<() => void>()
  let stopLocal: (() => void) | undefined
  let poll: NodeJS.Timeout | undefined
  let version = 0
  const wake = (): void => { for (const listener of listeners) listener() }

  return {
    async read (query) {
      return read(() => readPage(query))
    },

    async end () {
      const [floor, end] = read(() => bounds.get() as [bigint, bigint])
      return { end, floor }
    },

    onCommit (listener) {
      const entry = (): void => listener()
      listeners.add(entry)
      if (listeners.size === 1) {
        stopLocal = onDeliveries(wake)
        version = dataVersion.get() as number
        poll = setInterval(() => {
          // A file gone or locked answers at the next read: waiters keep waiting meanwhile.
          let now: number
          try {
            now = dataVersion.get() as number
          /* c8 ignore next 3 -- a store closed under a waiter: the poll stops before a close the tests make */
          } catch {
            return
          }
          if (now === version) return
          version = now
          wake()
        }, POLL_MS).unref()
      }
      return () => {
        if (!listeners.delete(entry) || listeners.size > 0) return
        clearInterval(poll)
        ;(stopLocal as () => void)()
      }
    },

    async prune (before) {
      let total = 0
      for (let more = true, dropped = 0; more; total += dropped) {
        // Between chunks, requests (and their writes) take their turn.
        if (total > 0) await new Promise((resolve) => setImmediate(resolve))
        ;[more, dropped] = write(() => pruneChunk.immediate(before.getTime()))
      }
      return total
    }
  }
}
