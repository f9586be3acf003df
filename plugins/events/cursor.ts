import { HttpError } from '../../src/http/errors.js'
import { cursors } from '../../src/http/cursor.js'

// The feed's position: [version, the event's position as 8 bytes], sealed like every list cursor.
const VERSION = 4
const LISTING = 'events'
const BAD_CURSOR = 'querystring/after is not one this service gave: follow the next link as it is, give now, or start again without it.'

/** The change feed's cursors: a position in commit order, the same whatever the types filter. */
export function eventCursors (key: Buffer) {
  const { seal, open } = cursors(key)
  return {
    write (position: bigint): string {
      const bytes = Buffer.alloc(9)
      bytes[0] = VERSION
      bytes.writeBigInt64BE(position, 1)
      return seal(bytes, LISTING)
    },

    /** The position a cursor holds; a 400 when it was altered or does not decode. */
    read (cursor: string): bigint {
      const position = open(cursor, LISTING)
      if (position === undefined || position.length !== 9 || position[0] !== VERSION) throw new HttpError(400, BAD_CURSOR)
      return position.readBigInt64BE(1)
    }
  }
}
