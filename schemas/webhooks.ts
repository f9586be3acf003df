import { Type, type Static } from '@sinclair/typebox'
import { Cursor, MAX_PAGE } from './list.js'
import { Int64, NewPlant, STORABLE_TEXT } from './plant.js'

/** The longest endpoint or delivery id: room above the ids the service makes (a prefix and 128 random bits). */
export const MAX_ID_LENGTH = 128
/** The longest endpoint description, in Unicode code points. */
export const MAX_DESCRIPTION_LENGTH = 1000

/** The events a change sends: a plant added, changed (PATCH) or deleted. */
export const WEBHOOK_EVENT_TYPES = ['plant.created', 'plant.updated', 'plant.deleted'] as const
export const WebhookEventType = Type.Unsafe<typeof WEBHOOK_EVENT_TYPES[number]>({
  type: 'string',
  enum: [...WEBHOOK_EVENT_TYPES],
  maxLength: 13,
  description: '`plant.created`: a plant added; `plant.updated`: a PATCH that changed it; `plant.deleted`: a DELETE that removed it'
})
export type WebhookEventType = Static<typeof WebhookEventType>

const Events = Type.Array(WebhookEventType, {
  minItems: 1,
  maxItems: WEBHOOK_EVENT_TYPES.length,
  uniqueItems: true,
  description: 'The event types the endpoint receives, as Standard Webhooks payloads `{type, timestamp, data}`. ' +
    'Without it, an endpoint receives `plant.created` only, with the NewPlant as the body (the origin document\'s event)',
  examples: [['plant.created', 'plant.updated', 'plant.deleted']]
})

/** A time, written as an RFC 3339 date-time string; handlers give a Date. */
const DateTime = (description: string) => Type.Unsafe<Date>({ type: 'string', format: 'date-time', maxLength: 32, description })
const EndpointUrl = Type.String({
  maxLength: 2048,
  pattern: STORABLE_TEXT,
  description: 'Where deliveries are POSTed: an absolute http or https URL, no user info, at most 2048 characters. ' +
    'A literal loopback, private, link-local, multicast, unspecified or cloud metadata address is refused unless the service allows private targets',
  examples: ['https://example.com/hooks/plants']
})
const Description = Type.String({ maxLength: MAX_DESCRIPTION_LENGTH, pattern: STORABLE_TEXT, description: 'What the endpoint is for, for people', examples: ['Inventory sync'] })
const Secret = Type.String({
  maxLength: 50,
  pattern: '^whsec_[A-Za-z0-9+/]{43}=$',
  description: 'The signing secret, `whsec_` and base64 of 32 random bytes (Standard Webhooks). Shown only here: keep it',
  examples: ['whsec_gfN0A3lLNmhwT2UXJI26xbb63i/U3R+kcTNIQo8NWHE=']
})

export const WebhookEndpoint = Type.Object({
  id: Type.String({ maxLength: MAX_ID_LENGTH, description: 'Opaque', examples: ['ep_2f1c0e55a3b84a8c9d6e7f0a1b2c3d4e'] }),
  url: EndpointUrl,
  description: Type.Optional(Description),
  events: Type.Optional(Events),
  enabled: Type.Boolean({ description: 'Whether changes made now are delivered to it; a 410 from the receiver, or every attempt failing for WEBHOOK_DISABLE_AFTER, disables it' }),
  createdAt: DateTime('When it was created'),
  disabledAt: Type.Optional(DateTime('When the service disabled it (a 410, or every attempt failing for WEBHOOK_DISABLE_AFTER); absent once it is enabled again')),
  disabledReason: Type.Optional(Type.String({ maxLength: 200, description: 'Why the service disabled it' }))
}, { $id: 'WebhookEndpoint', additionalProperties: false, description: 'A subscription to the changes of the store\'s plants; never its secret' })

export type WebhookEndpoint = Static<typeof WebhookEndpoint>

export const NewWebhookEndpoint = Type.Object({
  url: EndpointUrl,
  description: Type.Optional(Description),
  events: Type.Optional(Events)
}, { $id: 'NewWebhookEndpoint', description: 'A subscription to create' })

export type NewWebhookEndpoint = Static<typeof NewWebhookEndpoint>

export const WebhookEndpointPatch = Type.Object({
  url: Type.Optional(EndpointUrl),
  description: Type.Optional(Description),
  enabled: Type.Optional(Type.Boolean({ description: 'false stops its pending deliveries (they end failed, for a manual retry); true sends the changes made from now on' })),
  events: Type.Optional(Type.Union([Events, Type.Null({ description: 'Back to the default: `plant.created` only, in the origin body' })]))
}, { $id: 'WebhookEndpointPatch', description: 'The fields to change; those left out stay as they are' })

export type WebhookEndpointPatch = Static<typeof WebhookEndpointPatch>

export const CreatedWebhookEndpoint = Type.Composite([WebhookEndpoint, Type.Object({ secret: Secret })], {
  $id: 'CreatedWebhookEndpoint',
  additionalProperties: false,
  description: 'The endpoint just created, with its signing secret: the only time the secret is shown'
})
export type CreatedWebhookEndpoint = Static<typeof CreatedWebhookEndpoint>

export const WebhookSecret = Type.Object({ secret: Secret }, {
  $id: 'WebhookSecret',
  additionalProperties: false,
  description: 'The new signing secret; the previous one keeps signing beside it for 24 hours'
})
export type WebhookSecret = Static<typeof WebhookSecret>

export const WebhookDelivery = Type.Object({
  id: Type.String({ maxLength: MAX_ID_LENGTH, description: 'Opaque; also the `webhook-id` header of every attempt', examples: ['msg_019ab3c4d5e69f86d081884c7d65'] }),
  type: WebhookEventType,
  plantId: Type.Unsafe<bigint>({ ...Int64, description: 'The id of the plant the event tells of' }),
  status: Type.Unsafe<'pending' | 'succeeded' | 'failed'>({ type: 'string', enum: ['pending', 'succeeded', 'failed'], description: 'pending: an attempt is due or under way; failed: the retries are spent, or the endpoint was disabled' }),
  attempts: Type.Integer({ format: 'int32', minimum: 0, maximum: 2147483647, description: 'Attempts made so far' }),
  lastStatus: Type.Optional(Type.Integer({ format: 'int32', minimum: 100, maximum: 599, description: 'The HTTP status of the last attempt, when it got an answer' })),
  lastError: Type.Optional(Type.String({ maxLength: 1000, description: 'Why the last attempt failed, or why the delivery stopped' })),
  nextAttemptAt: Type.Optional(DateTime('When the next attempt is due (pending only)')),
  createdAt: DateTime('When the change was made')
}, { $id: 'WebhookDelivery', additionalProperties: false, description: 'One event sent to one endpoint, with its attempts' })

export type WebhookDelivery = Static<typeof WebhookDelivery>

export const WebhookParams = Type.Object({
  id: Type.String({ maxLength: MAX_ID_LENGTH, description: 'The endpoint id' })
})

export const DeliveryParams = Type.Object({
  id: Type.String({ maxLength: MAX_ID_LENGTH, description: 'The endpoint id' }),
  deliveryId: Type.String({ maxLength: MAX_ID_LENGTH, description: 'The delivery id (its webhook-id)' })
})

export const DeliveryListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ format: 'int32', minimum: 1, maximum: MAX_PAGE, default: 20, description: 'The most deliveries on the page' })),
  cursor: Type.Optional(Cursor)
}, { additionalProperties: false })

export type DeliveryListQuery = Static<typeof DeliveryListQuery>

const Timestamp = Type.String({ format: 'date-time', maxLength: 32, description: 'When the change was committed (RFC 3339): events are not ordered, and this orders them', examples: ['2026-01-01T12:00:00.000Z'] })

// The plant after a change, exactly: its id (exact), name and tag, and no other key.
const ChangedPlant = (description: string) => Type.Unsafe<NewPlant>(Type.Object(NewPlant.properties, { additionalProperties: false, description }))

/** The Standard Webhooks payload of plant.created: the plant added. */
export const PlantCreatedEvent = Type.Object({
  type: Type.Literal('plant.created', { description: 'A plant added' }),
  timestamp: Timestamp,
  data: ChangedPlant('The plant as it was added, id exact')
}, { $id: 'PlantCreatedEvent', additionalProperties: false, description: 'The body sent to an endpoint with `events` when a plant is added' })
export type PlantCreatedEvent = Static<typeof PlantCreatedEvent>

/** The Standard Webhooks payload of plant.updated: the plant after the change. */
export const PlantUpdatedEvent = Type.Object({
  type: Type.Literal('plant.updated', { description: 'A plant changed by a PATCH' }),
  timestamp: Timestamp,
  data: ChangedPlant('The plant as it is after the change, id exact')
}, { $id: 'PlantUpdatedEvent', additionalProperties: false, description: 'The body sent to an endpoint with `events` when a plant is changed' })
export type PlantUpdatedEvent = Static<typeof PlantUpdatedEvent>

/** plant.created or plant.updated: the plant after the change. */
export type PlantChangedEvent = PlantCreatedEvent | PlantUpdatedEvent

/** The Standard Webhooks payload of plant.deleted: the id of the plant removed. */
export const PlantDeletedEvent = Type.Object({
  type: Type.Literal('plant.deleted', { description: 'A plant removed by a DELETE' }),
  timestamp: Timestamp,
  data: Type.Object({ id: Type.Unsafe<bigint>({ ...Int64, description: 'The id of the plant removed' }) }, { additionalProperties: false })
}, { $id: 'PlantDeletedEvent', additionalProperties: false, description: 'The body sent to an endpoint with `events` when a plant is deleted' })
export type PlantDeletedEvent = Static<typeof PlantDeletedEvent>

/** What an endpoint with `events` receives. */
export type PlantEvent = PlantChangedEvent | PlantDeletedEvent

export const WebhookListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ format: 'int32', minimum: 1, maximum: MAX_PAGE, default: 20, description: 'The most endpoints on the page' })),
  cursor: Type.Optional(Cursor)
}, { additionalProperties: false })

export type WebhookListQuery = Static<typeof WebhookListQuery>

const header = (name: string, description: string, example: string, bounds: { maxLength: number, pattern?: string }) =>
  ({ name, in: 'header' as const, required: true, description, schema: { type: 'string' as const, ...bounds }, example })

const signatureHeaders = [
  header('webhook-id', 'The delivery id: the same on every attempt of one delivery', 'msg_019ab3c4d5e69f86d081884c7d65', { maxLength: MAX_ID_LENGTH }),
  header('webhook-timestamp', 'When the attempt was signed, in seconds since the epoch', '1767225600', { maxLength: 20, pattern: '^[0-9]+$' }),
  header('webhook-signature', '`v1,` and the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`, one per active secret, space-separated',
    'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=', { maxLength: 256, pattern: '^v1,[A-Za-z0-9+/]{43}=( v1,[A-Za-z0-9+/]{43}=)*$' })
]

const outcomes = {
  '2XX': { description: 'Received: the delivery succeeded' },
  410: { description: 'Gone: the endpoint is disabled and its pending deliveries stop' },
  default: { description: 'Anything else, a redirect, a timeout or no answer: the delivery is tried again later' }
}

function event (operationId: string, summary: string, description: string, body: string, schema: string) {
  return {
    post: {
      summary,
      description: `${description} Signed the Standard Webhooks way (standardwebhooks.com). At least once: a receiver deduplicates by \`webhook-id\`.`,
      operationId,
      tags: ['webhooks'],
      // Sent by this service to a receiver: no bearer token; the signature headers authenticate it.
      security: [],
      parameters: signatureHeaders,
      requestBody: { required: true, description: body, content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } } },
      responses: outcomes
    }
  }
}

/**
 * The events this service sends, for the OpenAPI document's `webhooks` section: the origin
 * document's POST of the NewPlant to an endpoint without `events`, and the three Standard
 * Webhooks payloads to the endpoints that name them.
 */
export const webhookEvents = {
  plantAdded: event('plantAdded', 'Plant added to the store',
    'Sent to every enabled endpoint without `events` once per plant added.',
    'The plant as it was created: the NewPlant JSON, id exact, tag absent when none', 'NewPlant'),
  plantCreated: event('plantCreated', 'plant.created',
    'Sent to every enabled endpoint whose `events` name `plant.created`, once per plant added (a replay of a create sends nothing; a plant deleted and added again is a new one).',
    '`{type: "plant.created", timestamp, data}`: data is the plant added', 'PlantCreatedEvent'),
  plantUpdated: event('plantUpdated', 'plant.updated',
    'Sent to every enabled endpoint whose `events` name `plant.updated`, once per PATCH that changed a plant (one that changes nothing, or a 412, sends nothing).',
    '`{type: "plant.updated", timestamp, data}`: data is the plant after the change', 'PlantUpdatedEvent'),
  plantDeleted: event('plantDeleted', 'plant.deleted',
    'Sent to every enabled endpoint whose `events` name `plant.deleted`, once per DELETE that removed a plant.',
    '`{type: "plant.deleted", timestamp, data: {id}}`', 'PlantDeletedEvent')
}
