import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import { Type } from '@sinclair/typebox'
import { EventListQuery, MAX_EVENTS_PAGE, ref, PlantCreatedFeedEvent, PlantDeletedFeedEvent, PlantUpdatedFeedEvent } from '../../schemas/index.js'
import { HttpError } from '../../src/http/errors.js'
import type { EventFeed, FeedPage } from '../../src/store/feed-types.js'
import { eventBit } from '../../src/store/webhook-common.js'
import type { WebhookEventType } from '../../src/store/webhook-types.js'
import { validKey } from '../../src/http/cursor.js'
import { jsonApiScope } from '../../src/http/json-api.js'
import { refuseRepeated } from '../../src/http/refuse-repeated.js'
import { error, unavailable } from '../../src/http/responses.js'
import { eventCursors } from './cursor.js'
import { pruneInBackground } from './prune.js'
import { waitingRoom } from './waiting.js'

export interface EventsOptions {
  /** The store's change feed. Required. */
  feed: EventFeed
  /** The key every instance on the database shares (PlantStore.cursorKey): it authenticates the cursors. */
  cursorKey: Buffer
  /** How long an event is kept at least, in ms (EVENTS_RETENTION). Required. */
  retention: number
  /** Requests waiting at once at most (MAX_CONNECTIONS): one more is answered at once. 1000 when absent. */
  maxWaiting?: number
}

function checkOptions (options: Partial<EventsOptions>): Required<EventsOptions> {
  const { feed, cursorKey, retention, maxWaiting = 1000 } = options
  if (feed === null || typeof feed !== 'object' || !(['read', 'end', 'onCommit', 'prune'] as const).every((m) => typeof feed[m] === 'function')) {
    throw new TypeError('events: options.feed must be an EventFeed')
  }
  if (!validKey(cursorKey)) throw new TypeError('events: options.cursorKey must be a Buffer of 16 bytes or more, the same for every instance')
  if (!(Number.isSafeInteger(retention) && (retention as number) > 0)) throw new TypeError('events: options.retention must be a positive integer (ms)')
  if (!(Number.isSafeInteger(maxWaiting) && maxWaiting > 0)) throw new TypeError('events: options.maxWaiting must be a positive integer')
  return { feed, cursorKey, retention: retention as number, maxWaiting }
}

const GONE = 'querystring/after is older than the oldest event the feed keeps: start again with after=now, then list the plants.'

// A page that woken waiters share is made JSON once.
const made = new WeakMap<FeedPage, string>()

/** The page's JSON, built from the data each event keeps as text (ids exact): one string, no serializer. */
function pageJson (page: FeedPage): string {
  const known = made.get(page)
  if (known !== undefined) return known
  const { events } = page
  let json = '['
  for (let i = 0; i < events.length; i++) {
    const { seq, type, at, data } = events[i]
    json += `${i === 0 ? '' : ','}{"id":"${seq}","type":"${type}","timestamp":"${new Date(at).toISOString()}","data":${data}}`
  }
  json += ']'
  made.set(page, json)
  return json
}

function typesMask (types: string | undefined): number {
  return types === undefined ? 7 : types.split(',').reduce((mask, type) => mask | eventBit(type as WebhookEventType), 0)
}

/** GET /events: the change feed (CONTRACT.md, "The change feed"), in commit order a page at a time. */
const events: FastifyPluginAsync<EventsOptions> = async (instance, options) => {
  const { feed, cursorKey, retention, maxWaiting } = checkOptions(options)
  const fastify = jsonApiScope(instance)
  const cursors = eventCursors(cursorKey)
  const room = waitingRoom(feed, maxWaiting)
  // A shutdown answers the waiting requests at once, before the server waits for them to end.
  fastify.addHook('preClose', async () => room.close())
  pruneInBackground(fastify, feed, retention)

  fastify.get('/events', {
    config: { scope: 'events:read' },
    preValidation: refuseRepeated,
    schema: {
      summary: 'Read the change feed',
      description: 'Every change of a plant, in the order the changes committed: the events the webhooks send, each with an id. ' +
        'The `Link` header always gives the next page (`rel="next"`), the same position when the page is empty: a consumer that ' +
        'follows it sees every event the feed keeps exactly once. With `wait`, an empty page waits for the next commit. ' +
        'Events are kept for `EVENTS_RETENTION`; a cursor older than that is a 410.',
      operationId: 'listEvents',
      tags: ['events'],
      querystring: EventListQuery,
      response: {
        200: Type.Array(Type.Union([ref(PlantCreatedFeedEvent), ref(PlantUpdatedFeedEvent), ref(PlantDeletedFeedEvent)]), {
          maxItems: MAX_EVENTS_PAGE,
          description: 'A page of events in commit order; `[]` when none follows (after `wait` seconds at most)',
          headers: {
            Link: Type.String({ maxLength: 1024, pattern: '^<[^>]*>; rel="next"$', description: 'Always: `<…>; rel="next"`, the page that follows this one, relative to it' })
          }
        }),
        400: error('A query parameter is out of range, not a plain decimal, repeated or unknown, or the cursor was altered'),
        410: error('The cursor is older than the oldest event the feed keeps: start again with `after=now`, then list the plants'),
        503: unavailable
      }
    }
  }, async (request, reply) => {
    const { after, types } = request.query
    // Never undefined here: the schema's defaults fill them in.
    const limit = request.query.limit as number
    const wait = request.query.wait as number
    const mask = typesMask(types)
    const stay = wait > 0 && room.open ? room.enter() : undefined
    try {
      let page: FeedPage
      let position: bigint | undefined
      if (after === 'now') {
        // The current end, and nothing yet: what commits from now on.
        const { end, floor } = await feed.end()
        page = { events: [], floor, next: end }
      } else {
        position = after === undefined ? undefined : cursors.read(after)
        page = await feed.read({ after: position, limit, types: mask })
        if (position !== undefined && position < page.floor) throw new HttpError(410, GONE)
      }
      if (stay !== undefined) {
        const until = Date.now() + wait * 1000
        const gone = new AbortController()
        reply.raw.once('close', () => gone.abort())
        // Commits keep coming: a part page waits for the room's next wake-up (WAKE_MS at most) and is read again.
        if (page.events.length > 0 && page.events.length < limit && room.hold > 0) {
          await room.wait(room.commits, Date.now() + room.hold, gone.signal)
          page = await room.read({ after: position, limit, types: mask })
        }
        for (let seen = stay.seen; page.events.length === 0 && await room.wait(seen, until, gone.signal);) {
          seen = room.commits
          page = await room.read({ after: page.next, limit, types: mask })
        }
        if (page.events.length > 0) room.answered()
      }
      const query = `after=${cursors.write(page.next)}&limit=${limit}${types === undefined ? '' : `&types=${types}`}${wait > 0 ? `&wait=${wait}` : ''}`
      // The route's own path, prefix included: the reference resolves against the request URL.
      reply.header('link', `<${request.routeOptions.url}?${query}>; rel="next"`)
      reply.type('application/json; charset=utf-8')
      // Already JSON: a string with a JSON type goes out as it is.
      return (reply as FastifyReply).send(pageJson(page))
    } finally {
      stay?.leave()
    }
  })
}

export default events
