// schemas/: the TypeBox schemas, the one source of validation, serialization, TS types
// and OpenAPI. They import nothing of the service.

import { Type, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox'
import { ErrorBody } from './error.js'
import { PlantCreatedFeedEvent, PlantDeletedFeedEvent, PlantUpdatedFeedEvent } from './events.js'
import { PlantListItem } from './list.js'
import { NewPlant, Plant } from './plant.js'
import { PlantPatch } from './plant-patch.js'
import { CreatedWebhookEndpoint, NewWebhookEndpoint, PlantCreatedEvent, PlantDeletedEvent, PlantUpdatedEvent, WebhookDelivery, WebhookEndpoint, WebhookEndpointPatch, WebhookSecret } from './webhooks.js'

export * from './error.js'
export * from './events.js'
export * from './headers.js'
export * from './list.js'
export * from './metrics.js'
export * from './plant.js'
export * from './plant-patch.js'
export * from './webhooks.js'

/** The named schemas, registered with `addSchema` so routes and the OpenAPI document share them. */
export const sharedSchemas = [Plant, NewPlant, PlantPatch, PlantListItem, ErrorBody,
  WebhookEndpoint, NewWebhookEndpoint, WebhookEndpointPatch, CreatedWebhookEndpoint, WebhookSecret, WebhookDelivery, PlantCreatedEvent, PlantUpdatedEvent, PlantDeletedEvent,
  PlantCreatedFeedEvent, PlantUpdatedFeedEvent, PlantDeletedFeedEvent]

/** A `$ref` to a shared schema that keeps the referenced schema's static type. */
export function ref<T extends TSchema> (schema: T): TUnsafe<Static<T>> {
  if (schema.$id === undefined) throw new Error('ref() needs a schema with an $id')
  return Type.Unsafe<Static<T>>(Type.Ref(schema.$id))
}
