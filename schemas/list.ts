import { Type, type Static } from '@sinclair/typebox'
import { MAX_TAG_LENGTH, NewPlant, Plant, STORABLE_TEXT } from './plant.js'

/** A plant as a page of the list shows it: its id beside the Plant fields, built from both schemas. */
export const PlantListItem = Type.Composite([Type.Pick(NewPlant, ['id']), Plant], {
  $id: 'PlantListItem',
  additionalProperties: false,
  description: 'A plant and its identification number'
})

export type PlantListItem = Static<typeof PlantListItem>

export const MAX_PAGE = 100

/**
 * The longest cursor a list accepts: well above what the service writes (a position
 * and its authentication, in base64url), so that a longer one is refused unread.
 */
export const MAX_CURSOR_LENGTH = 256

/** A cursor as the `cursor` query parameter of a paged list takes it. */
export const Cursor = Type.String({
  maxLength: MAX_CURSOR_LENGTH,
  description: 'Where the page starts: opaque, taken from the `next` link of the previous page'
})

export const PlantListQuery = Type.Object({
  // Optional for the client (the OpenAPI document says so); the validator fills in the default.
  limit: Type.Optional(Type.Integer({ format: 'int32', minimum: 1, maximum: MAX_PAGE, default: 20, description: 'The most plants on the page' })),
  tag: Type.Optional(Type.String({ maxLength: MAX_TAG_LENGTH, pattern: STORABLE_TEXT, description: 'Only plants with exactly this tag' })),
  cursor: Type.Optional(Cursor)
}, { additionalProperties: false })

export type PlantListQuery = Static<typeof PlantListQuery>
