import { Type, type Static } from '@sinclair/typebox'
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

/** plant.created in the change feed: the webhook payload, and the event's id. */
export const PlantCreatedFeedEvent = Type.Composite([EventId, PlantCreatedEvent], {
  $id: 'PlantCreatedFeedEvent',
  additionalProperties: false,
  description: 'A plant added, as the webhooks send it (PlantCreatedEvent), with the event\'s id'
})
export type PlantCreatedFeedEvent = Static<typeof PlantCreatedFeedEvent>

/** plant.updated in the change feed. */
export const PlantUpdatedFeedEvent = Type.Composite([EventId, PlantUpdatedEvent], {
  $id: 'PlantUpdatedFeedEvent',
  additionalProperties: false,
  description: 'A plant changed, as the webhooks send it (PlantUpdatedEvent), with the event\'s id'
})
export type PlantUpdatedFeedEvent = Static<typeof PlantUpdatedFeedEvent>

/** plant.created or plant.updated in the change feed. */
export type PlantChangedFeedEvent = PlantCreatedFeedEvent | PlantUpdatedFeedEvent

/** plant.deleted in the change feed. */
export const PlantDeletedFeedEvent = Type.Composite([EventId, PlantDeletedEvent], {
  $id: 'PlantDeletedFeedEvent',
  additionalProperties: false,
  description: 'A plant deleted, as the webhooks send it (PlantDeletedEvent), with the event\'s id'
})
export type PlantDeletedFeedEvent = Static<typeof PlantDeletedFeedEvent>

/** An event of the change feed. */
export type FeedEvent = PlantChangedFeedEvent | PlantDeletedFeedEvent
