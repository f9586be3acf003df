import type { FeedEvent } from '../../schemas/index.js'
import { nextLink, type Raw } from './pages.js'
import { fail, readBody, type CallOptions, type Send } from './request.js'

export type EventType = FeedEvent['type']

export interface FollowOptions {
  /** Where to start: a `cursor` of an earlier follower, or `now` (no history). */
  after?: string
  /** Only these types (all three when absent). A cursor resumes the same types. */
  types?: readonly EventType[]
  /** Stops the follower: the loop that reads it ends with the abort's error. */
  signal?: AbortSignal
  /** Events per page, 1 to 1000 (the service's default when absent). */
  limit?: number
  /** Seconds each request waits for a commit, 1 to 30 (default 30). */
  wait?: number
}

/** The events, in commit order, for as long as the loop reads. */
export interface EventFollower extends AsyncIterable<FeedEvent> {
  readonly cursor: string | undefined
}

export interface EventsApi {
  /** A cursor at the current end: follow from it to see every change committed after this call. */
  now (options?: CallOptions): Promise<string>
  /** Follows the change feed (GET /events) with long polls, retried as every read is. */
  follow (options?: FollowOptions): EventFollower
}

// A cursor of this client: the service's position.
const OWN = /^(?:now|([A-Za-z0-9_-]+)(?:\.([1-9][0-9]{0,3}))?)$/

export function eventsApi (send: Send, base: URL): EventsApi {
  return {
    async now (options) {
      const call = { method: 'GET', url: new URL('events?after=now&limit=1', base), repeat: 'idempotent' } as const
      const answer = await send(call, options)
      readBody(call, answer, 200)
      const after = nextLink(answer.headers.get('link'), call.url)?.searchParams.get('after')
      if (after == null) throw fail(call, answer)
      return after
    },

    follow ({ after, types, signal, limit, wait = 30 } = {}) {
      const own = after === undefined ? undefined : OWN.exec(after)
      if (own === null) throw new TypeError('after must be a cursor of a follower, or now')
      let cursor = after
      async function * events (): AsyncGenerator<FeedEvent, void, undefined> {
        let url = new URL('events', base)
        // `now` is made a position first (an empty page at once), so that every cursor handed out is one.
        if (after !== undefined) url.searchParams.set('after', own?.[1] ?? 'now')
        if (limit !== undefined) url.searchParams.set('limit', String(limit))
        if (types !== undefined) url.searchParams.set('types', types.join(','))
        url.searchParams.set('wait', after === 'now' ? '0' : String(wait))
        let skip = Number(own?.[2] ?? 0)
        for (;;) {
          const call = { method: 'GET', url, repeat: 'idempotent' } as const
          const answer = await send(call, { signal })
          const body = readBody(call, answer, 200)
          const next = nextLink(answer.headers.get('link'), url)
          if (!Array.isArray(body) || next === undefined || next.origin !== url.origin) throw fail(call, answer)
          const start = url.searchParams.get('after') ?? ''
          for (let i = 0; i < body.length; i++) {
            if (skip > 0) {
              skip--
              continue
            }
            cursor = i === body.length - 1 ? next.searchParams.get('after') as string : `${start}.${i + 1}`
            const raw = body[i] as Raw
            yield { ...raw, data: { ...raw.data, id: BigInt(raw.data.id) } } as FeedEvent
          }
          cursor = next.searchParams.get('after') as string
          url = next
          url.searchParams.set('wait', String(wait))
        }
      }
      const iterator = events()
      return {
        [Symbol.asyncIterator]: () => iterator,
        get cursor () {
          return cursor
        }
      }
    }
  }
}
