import t from 'tap'
import { INT64_MAX, INT64_MIN, readInt64 } from '../../src/validation.js'

t.test('readInt64 accepts exactly the signed 64-bit integers', async (t) => {
  t.equal(readInt64(5, false), 5n)
  t.equal(readInt64(-0, false), 0n)
  t.equal(readInt64(INT64_MAX, false), INT64_MAX)
  t.equal(readInt64(INT64_MIN, false), INT64_MIN)
  t.match(readInt64(INT64_MAX + 1n, false), /^must be an integer from/)
  t.match(readInt64(INT64_MIN - 1n, false), /^must be an integer from/)
  t.match(readInt64(2 ** 60, false), /^must be an integer from/, 'an inexact double')
  t.equal(readInt64(1.5, false), 'must be integer')
  t.equal(readInt64(Number.NaN, false), 'must be integer')
  t.equal(readInt64('5', false), 'must be integer', 'no coercion from text in a body')
  t.equal(readInt64(null, false), 'must be integer')
})

t.test('readInt64 reads decimal text in a path', async (t) => {
  t.equal(readInt64('5', true), 5n)
  t.equal(readInt64('-9223372036854775808', true), INT64_MIN)
  t.match(readInt64('9223372036854775808', true), /^must be an integer from/)
  for (const text of ['', '5.0', '1e3', ' 5', '+5', '0x1f', 'five']) t.equal(readInt64(text, true), 'must be integer', JSON.stringify(text))
})
