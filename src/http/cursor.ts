import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto'
import { HttpError } from './errors.js'

// A cursor is where a page starts, with a check that ties it to its listing.
const VERSION = 1
const CHECK = 16
const SHAPE = /^[A-Za-z0-9_-]{34}$/

/** Seals and opens the cursors of the lists, with a key every instance on the database shares. */
export interface Cursors {
  /** A cursor for `position` in the listing named `listing` (a filter, an endpoint). */
  seal (position: Buffer, listing: string): string
  /** The position a cursor of `listing` holds. */
  open (cursor: string, listing: string): Buffer | undefined
}

/** Whether `key` can sign cursors: bytes, at least as many as the check keeps. */
export function validKey (key: unknown): key is Buffer {
  return Buffer.isBuffer(key) && key.length >= CHECK
}

export function cursors (key: Buffer): Cursors {
  // A key object made once: made from raw bytes at every call, the key would cost more than the HMAC.
  const secret = createSecretKey(key)
  const check = (position: Buffer, listing: string): Buffer =>
    createHmac('sha256', secret).update(position).update(listing).digest().subarray(0, CHECK)
  return {
    seal: (position, listing) => Buffer.concat([position, check(position, listing)]).toString('base64url'),
    open (cursor, listing) {
      const bytes = Buffer.from(cursor, 'base64url')
      // Decoding skips what is not base64url: only the text this service wrote is taken back.
      if (bytes.length <= CHECK || bytes.toString('base64url') !== cursor) return undefined
      const position = bytes.subarray(0, bytes.length - CHECK)
      return timingSafeEqual(check(position, listing), bytes.subarray(bytes.length - CHECK)) ? position : undefined
    }
  }
}

const BAD_CURSOR = 'querystring/cursor is not one this service gave for this listing: follow the next link as it is, or start again without a cursor.'

function tagListing (tag: string | undefined): string {
  return tag === undefined ? 'plants -' : `plants +${tag}`
}

/** The plants list's cursors: where a page starts, after an id, in a listing filtered by a tag or not. */
export function plantCursors (key: Buffer) {
  const { seal, open } = cursors(key)
  return {
    /** The cursor of the page that starts after `id`, for a listing filtered by `tag`. */
    write (id: bigint, tag: string | undefined): string {
      const position = Buffer.alloc(9)
      position[0] = VERSION
      position.writeBigInt64BE(id, 1)
      return seal(position, tagListing(tag))
    },

    /** The id a cursor starts after; a 400 when it was altered, does not decode, or belongs to another tag. */
    read (cursor: string, tag: string | undefined): bigint {
      const position = SHAPE.test(cursor) ? open(cursor, tagListing(tag)) : undefined
      if (position === undefined) throw new HttpError(400, BAD_CURSOR)
      return position.readBigInt64BE(1)
    }
  }
}

/** The cursors of a list in creation order (an endpoint's deliveries, the endpoints). */
export function timeCursors (key: Buffer, version: number) {
  const { seal, open } = cursors(key)
  return {
    write (listing: string, last: { createdAt: Date, id: string }): string {
      const position = Buffer.alloc(9)
      position[0] = version
      position.writeBigInt64BE(BigInt(last.createdAt.getTime()), 1)
      return seal(Buffer.concat([position, Buffer.from(last.id)]), listing)
    },

    /** The last item of the previous page; a 400 when the cursor was altered, does not decode. */
    read (listing: string, cursor: string): { createdAt: Date, id: string } {
      // Authenticated, so the position is one written above: a time a Date holds, and an id the store gave.
      const position = open(cursor, listing)
      if (position === undefined) throw new HttpError(400, BAD_CURSOR)
      return { createdAt: new Date(Number(position.readBigInt64BE(1))), id: position.subarray(9).toString() }
    }
  }
}
