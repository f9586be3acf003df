import { Type, type Static } from '@sinclair/typebox'
import { NewPlant } from './plant.js'

// The fields are NewPlant's own schemas, so a rule or limit given there holds here too.
const { name, tag } = NewPlant.properties

/**
 * A JSON merge patch (RFC 7396) of a plant: a field given is set, `tag: null` removes
 * the tag, a field left out stays as it is. `name` cannot be removed (a plant always
 * has one) and `id` cannot be given: an id never changes.
 */
export const PlantPatch = Type.Object({
  id: Type.Optional(Type.Never({ description: 'Not accepted: an id never changes (delete the plant, then create it under the new id)' })),
  name: Type.Optional(name),
  tag: Type.Optional(Type.Unsafe<string | null>({ ...tag, type: ['string', 'null'], description: 'The new tag, or null to remove it' }))
}, {
  $id: 'PlantPatch',
  description: 'A JSON merge patch (RFC 7396) of the plant: the fields to change; those left out stay as they are. Other keys are ignored'
})

export type PlantPatch = Static<typeof PlantPatch>
