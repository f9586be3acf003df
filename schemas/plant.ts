import { Type, type Static } from '@sinclair/typebox'

// Text a store cannot keep exactly: U+0000 and unpaired UTF-16 surrogates.
// Ajv compiles patterns with the `u` flag, so a paired surrogate (an emoji) is
// one code point and never matches the excluded range.
export const STORABLE_TEXT = '^[^\\u0000\\uD800-\\uDFFF]*$'

/**
 * The longest `name` and `tag`, in Unicode code points (Ajv's maxLength counts
 * those). A tag of 4-byte characters this long still fits a PostgreSQL btree
 * entry, so every store indexes it.
 */
export const MAX_NAME_LENGTH = 1000
export const MAX_TAG_LENGTH = 500

/**
 * The largest body a plant write (POST /plants, PATCH /plants/{id}) reads, in bytes,
 * below the host's bodyLimit: the largest valid NewPlant (the longest id, every
 * character a surrogate pair written as two `\uXXXX` escapes) with room for
 * whitespace and ignored properties. Larger is a 413 from its Content-Length, before
 * the body is read: a handful of oversized writes cannot hold the memory and the
 * event loop that a parse, a validation and a store write of each would take.
 */
export const PLANT_BODY_LIMIT = 32 * 1024

/**
 * A signed 64-bit integer. The JSON body parser hands integers beyond 2^53
 * over as BigInt, and the validator turns every accepted value into a BigInt,
 * so handlers always see `bigint`. The bounds are the exact doubles -2^63 and
 * 2^63, for the document's readers; the validator checks the range exactly
 * (src/http/validation.ts), never against those doubles.
 */
export const Int64 = Type.Unsafe<bigint>({ type: 'integer', format: 'int64', minimum: -(2 ** 63), exclusiveMaximum: 2 ** 63 })

const name = { maxLength: MAX_NAME_LENGTH, pattern: STORABLE_TEXT, description: 'The name of the plant', examples: ['Monstera'] }
const tag = { maxLength: MAX_TAG_LENGTH, pattern: STORABLE_TEXT, description: 'A tag that specifies the type of the plant', examples: ['climber'] }

export const Plant = Type.Object({
  name: Type.String(name),
  tag: Type.Optional(Type.String(tag))
}, { $id: 'Plant', additionalProperties: false })

export type Plant = Static<typeof Plant>

export const NewPlant = Type.Object({
  id: Type.Unsafe<bigint>({ ...Int64, description: 'Identification number of the plant', examples: [10] }),
  name: Type.String(name),
  tag: Type.Optional(Type.String(tag))
}, { $id: 'NewPlant', description: 'A Plant with the identification number the client chooses' })

export type NewPlant = Static<typeof NewPlant>

export const PlantParams = Type.Object({
  id: Type.Unsafe<bigint>({ ...Int64, description: 'Identification number of the plant' })
})

export type PlantParams = Static<typeof PlantParams>
