import { Type, type Static } from '@sinclair/typebox'
import { NewPlant, Plant, STORABLE_TEXT } from './plant.js'

/** A plant as a page of the list shows it: its id beside the Plant fields, built from both schemas. */
export const PlantListItem = Type.Composite([Type.Pick(NewPlant, ['id']), Plant], {
  $id: 'PlantListItem',
  additionalProperties: false,
  description: 'A plant and its identification number'
})

export type PlantListItem = Static<typeof PlantListItem>

export const MAX_PAGE = 100

export const PlantListQuery = Type.Object({
  // Optional for the client (the OpenAPI document says so); the validator fills in the default.
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 20, description: 'The most plants on the page' })),
  tag: Type.Optional(Type.String({ pattern: STORABLE_TEXT, description: 'Only plants with exactly this tag' })),
  cursor: Type.Optional(Type.String({ description: 'Where the page starts: opaque, taken from the `next` link of the previous page' }))
}, { additionalProperties: false })

export type PlantListQuery = Static<typeof PlantListQuery>
