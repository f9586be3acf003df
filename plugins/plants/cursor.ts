import { hash } from 'node:crypto'
import { HttpError } from '../../src/http/errors.js'

// A cursor is where a page starts, with a check that ties it to its listing:
// base64url of [the position, 8 bytes of SHA-256 over the position and the listing].
// It is opaque to clients and tamper-evident; it is not a secret (it grants nothing
// a client could not ask for). The plants' position is [version, id as 8 bytes].
const VERSION = 1
const SHAPE = /^[A-Za-z0-9_-]{23}$/
const CHECK = 8

const DOMAIN = Buffer.from('plant-store cursor')

// One call over the three parts, where a Hash object and its updates cost twice as much (a page writes one check, a cursor read another).
function check (position: Buffer, listing: string): Buffer {
  return hash('sha256', Buffer.concat([DOMAIN, position, Buffer.from(listing)]), 'buffer').subarray(0, CHECK)
}

/** A cursor for `position` in the listing named `listing` (a filter, an endpoint). */
export function sealCursor (position: Buffer, listing: string): string {
  return Buffer.concat([position, check(position, listing)]).toString('base64url')
}

/** The position a cursor of `listing` holds; undefined when it was altered, does not decode, or belongs to another listing. */
export function openCursor (cursor: string, listing: string): Buffer | undefined {
  const bytes = Buffer.from(cursor, 'base64url')
  const position = bytes.subarray(0, Math.max(bytes.length - CHECK, 0))
  // Decoding skips what is not base64url: only the text this service wrote is taken back.
  return position.length > 0 && sealCursor(position, listing) === cursor ? position : undefined
}

function tagListing (tag: string | undefined): string {
  return tag === undefined ? '-' : `+${tag}`
}

/** The cursor of the page that starts after `id`, for a listing filtered by `tag`. */
export function writeCursor (id: bigint, tag: string | undefined): string {
  const position = Buffer.alloc(9)
  position[0] = VERSION
  position.writeBigInt64BE(id, 1)
  return sealCursor(position, tagListing(tag))
}

/** The id a cursor starts after; a 400 when it was altered, does not decode, or belongs to another tag. */
export function readCursor (cursor: string, tag: string | undefined): bigint {
  const position = SHAPE.test(cursor) ? openCursor(cursor, tagListing(tag)) : undefined
  if (position === undefined) {
    throw new HttpError(400, 'querystring/cursor is not one this service gave for this listing: follow the next link as it is, or start again without a cursor.')
  }
  return position.readBigInt64BE(1)
}
