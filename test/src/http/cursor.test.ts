import { createHmac } from 'node:crypto'
import t from 'tap'
import { cursors } from '../../../src/http/cursor.js'

t.test('a cursor is its position and an HMAC of it and its listing; it opens for that listing alone, unaltered', async (t) => {
  const key = Buffer.alloc(32, 7)
  const { seal, open } = cursors(key)
  const position = (n: number): Buffer => Buffer.from([1, n])
  const check = (bytes: Buffer, listing: string): string =>
    Buffer.concat([bytes, createHmac('sha256', key).update(bytes).update(listing).digest().subarray(0, 16)]).toString('base64url')

  const first = seal(position(1), 'a')
  t.equal(first, check(position(1), 'a'), 'the position and an HMAC-SHA256 of it and the listing')
  t.equal(seal(position(1), 'a'), first, 'the same each time')
  t.equal(seal(position(2), 'a'), check(position(2), 'a'), 'another position')
  t.equal(seal(position(2), 'b'), check(position(2), 'b'), 'another listing')
  t.same(open(first, 'a'), position(1))
  t.equal(open(first, 'b'), undefined, 'not for another listing')
  t.equal(open(first.slice(0, -1) + (first.endsWith('A') ? 'B' : 'A'), 'a'), undefined, 'nor altered')
})
