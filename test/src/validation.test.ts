import t from 'tap'
import { JsonFraction } from '../../src/json/parse.js'
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
  t.match(readInt64(Infinity, false), /^must be an integer from/, 'beyond a double, as the body parser gives 1e400')
  t.match(readInt64(-Infinity, false), /^must be an integer from/)
  t.equal(readInt64(new JsonFraction('1e-400'), false), 'must be integer', 'a fraction whose double is whole')
  t.equal(readInt64('5', false), 'must be integer', 'no coercion from text in a body')
  t.equal(readInt64(null, false), 'must be integer')
})

t.test('readInt64 reads canonical decimal text in a path', async (t) => {
  t.equal(readInt64('5', true), 5n)
  t.equal(readInt64('0', true), 0n)
  t.equal(readInt64('-7', true), -7n)
  t.equal(readInt64('-9223372036854775808', true), INT64_MIN)
  t.match(readInt64('9223372036854775808', true), /^must be an integer from/)
  for (const text of ['', '5.0', '1e3', ' 5', '5 ', '+5', '0x1f', 'five', '007', '00', '-0', '-007', '+0', '-']) t.equal(readInt64(text, true), 'must be integer', JSON.stringify(text))
})
