import { createHash } from 'node:crypto'
import { HttpError } from '../../src/errors.js'

// A cursor is the last id of a page, with a check that ties it to its tag filter:
// base64url of [version, id as 8 bytes, 8 bytes of SHA-256]. It is opaque to
// clients and tamper-evident; it is not a secret (it grants nothing a client could not ask for).
const VERSION = 1
const SHAPE = /^[A-Za-z0-9_-]{23}$/

function check (payload: Buffer, tag: string | undefined): Buffer {
  return createHash('sha256').update('plant-store cursor').update(payload).update(tag === undefined ? '-' : `+${tag}`).digest().subarray(0, 8)
}

/** The cursor of the page that starts after `id`, for a listing filtered by `tag`. */
export function writeCursor (id: bigint, tag: string | undefined): string {
  const payload = Buffer.alloc(9)
  payload[0] = VERSION
  payload.writeBigInt64BE(id, 1)
  return Buffer.concat([payload, check(payload, tag)]).toString('base64url')
}

/** The id a cursor starts after; a 400 when it was altered, does not decode, or belongs to another tag. */
export function readCursor (cursor: string, tag: string | undefined): bigint {
  const bytes = Buffer.from(cursor, 'base64url')
  const payload = bytes.subarray(0, 9)
  if (!SHAPE.test(cursor) || payload[0] !== VERSION || !check(payload, tag).equals(bytes.subarray(9))) {
    throw new HttpError(400, 'querystring/cursor is not one this service gave for this listing: follow the next link as it is, or start again without a cursor.')
  }
  return payload.readBigInt64BE(1)
}
