import { CANONICAL_DECIMAL, isInt64 } from '../shared/ids.js'

/** A plant id as a caller may give it: a bigint, a safe-integer number, or a canonical decimal string. */
export type PlantId = bigint | number | string

/** The id as an exact bigint, or a TypeError / RangeError before anything is sent. */
export function toId (id: PlantId): bigint {
  let value: bigint
  if (typeof id === 'bigint') {
    value = id
  } else if (typeof id === 'number') {
    if (!Number.isSafeInteger(id)) {
      throw new RangeError(`Plant id ${id} is not a safe integer (Number.isSafeInteger): it may already be rounded. Pass a bigint or a decimal string.`)
    }
    value = BigInt(id)
  } else if (typeof id === 'string' && CANONICAL_DECIMAL.test(id)) {
    value = BigInt(id)
  } else {
    throw new TypeError(`Plant id ${JSON.stringify(id)} is not a bigint, a safe integer or a canonical decimal string.`)
  }
  if (!isInt64(value)) throw new RangeError(`Plant id ${value} is outside the signed 64-bit range.`)
  return value
}
