import { Type, type Static, type TObject } from '@sinclair/typebox'
import { MAX_CURSOR_LENGTH } from './list.js'
import { PlantCreatedEvent, PlantDeletedEvent, PlantUpdatedEvent, WEBHOOK_EVENT_TYPES } from './webhooks.js'

/** The most events on one page of the change feed. */
export const MAX_EVENTS_PAGE = 1000
/** The longest a request to the change feed may wait for an event, in seconds. */
export const MAX_EVENTS_WAIT = 30

const TYPE = `(${WEBHOOK_EVENT_TYPES.map((type) => type.replace('.', '\\.')).join('|')})`

export const EventListQuery = Type.Object({
  after: Type.Optional(Type.String({
    maxLength: MAX_CURSOR_LENGTH,
    description: 'Where the page starts: opaque, taken from the `next` link of the previous page, or `now` for the current end ' +
      '(no history). Without it, the feed starts at the oldest event it keeps'
  })),
  limit: Type.Optional(Type.Integer({ format: 'int32', minimum: 1, maximum: MAX_EVENTS_PAGE, default: 100, description: 'The most events on the page' })),
  types: Type.Optional(Type.String({
    maxLength: 64,
    pattern: `^${TYPE}(,${TYPE})*$`,
    description: 'Only events of these types, comma-separated; all three when absent',
    examples: ['plant.created,plant.deleted']
  })),
  wait: Type.Optional(Type.Integer({
    format: 'int32',
    minimum: 0,
    maximum: MAX_EVENTS_WAIT,
    default: 0,
    description: 'Seconds to wait, when no event follows `after`, for one to commit (long polling): the answer comes as soon as one does'
  }))
}, { additionalProperties: false })

export type EventListQuery = Static<typeof EventListQuery>

const EventId = Type.Object({
  id: Type.String({ maxLength: 20, pattern: '^[0-9]+$', description: 'Opaque, unique per event', examples: ['1024'] })
})

/** An event type's webhook payload with the event's id: the feed's schema of that type, exact. */
function feedEvent<T extends TObject> (payload: T, $id: string, what: string) {
  return Type.Composite([EventId, payload], {
    $id,
    additionalProperties: false,
    description: `A plant ${what}, as the webhooks send it (${payload.$id as string}), with the event's id`
  })
}

export const PlantCreatedFeedEvent = feedEvent(PlantCreatedEvent, 'PlantCreatedFeedEvent', 'added')
export type PlantCreatedFeedEvent = Static<typeof PlantCreatedFeedEvent>

export const PlantUpdatedFeedEvent = feedEvent(PlantUpdatedEvent, 'PlantUpdatedFeedEvent', 'changed')
export type PlantUpdatedFeedEvent = Static<typeof PlantUpdatedFeedEvent>

/** plant.created or plant.updated in the change feed. */
export type PlantChangedFeedEvent = PlantCreatedFeedEvent | PlantUpdatedFeedEvent

export const PlantDeletedFeedEvent = feedEvent(PlantDeletedEvent, 'PlantDeletedFeedEvent', 'deleted')
export type PlantDeletedFeedEvent = Static<typeof PlantDeletedFeedEvent>

/** An event of the change feed. */
export type FeedEvent = PlantChangedFeedEvent | PlantDeletedFeedEvent
