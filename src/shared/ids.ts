// What a plant id is, for the service and the client alike: a signed 64-bit integer,
// written in decimal canonically. It imports nothing: the browser client bundles it as it is.

export const INT64_MIN = -(2n ** 63n)
export const INT64_MAX = 2n ** 63n - 1n

/** Canonical decimal text: no sign on zero, no plus, no leading zeros (`007`, `+7`, `-0` are refused). */
export const CANONICAL_DECIMAL = /^(?:0|-?[1-9]\d*)$/

/** Whether a whole number lies in the signed 64-bit range. */
export function isInt64 (value: bigint): boolean {
  return value >= INT64_MIN && value <= INT64_MAX
}
