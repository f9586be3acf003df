import { Type, type Static } from '@sinclair/typebox'

// Text a store cannot keep exactly: U+0000 and unpaired UTF-16 surrogates.
// Ajv compiles patterns with the `u` flag, so a paired surrogate (an emoji) is
// one code point and never matches the excluded range.
export const STORABLE_TEXT = '^[^\\u0000\\uD800-\\uDFFF]*$'

/**
 * A signed 64-bit integer. The JSON body parser hands integers beyond 2^53
 * over as BigInt, and the validator turns every accepted value into a BigInt,
 * so handlers always see `bigint`.
 */
export const Int64 = Type.Unsafe<bigint>({ type: 'integer', format: 'int64' })

export const Plant = Type.Object({
  name: Type.String({ description: 'The name of the plant', examples: ['Monstera'] }),
  tag: Type.Optional(Type.String({ description: 'A tag that specifies the type of the plant', examples: ['climber'] }))
}, { $id: 'Plant', additionalProperties: false })

export type Plant = Static<typeof Plant>

export const NewPlant = Type.Object({
  id: Type.Unsafe<bigint>({ ...Int64, description: 'Identification number of the plant', examples: [10] }),
  name: Type.String({ pattern: STORABLE_TEXT, description: 'The name of the plant', examples: ['Monstera'] }),
  tag: Type.Optional(Type.String({ pattern: STORABLE_TEXT, description: 'A tag that specifies the type of the plant', examples: ['climber'] }))
}, { $id: 'NewPlant', description: 'A Plant with the identification number the client chooses' })

export type NewPlant = Static<typeof NewPlant>

export const PlantParams = Type.Object({
  id: Type.Unsafe<bigint>({ ...Int64, description: 'Identification number of the plant' })
})

export type PlantParams = Static<typeof PlantParams>
