import fc from 'fast-check'
import t from 'tap'
import { mayRound, parseExact, stringifyExact } from '../../../src/shared/exact-json.js'
import { JsonBodyError } from '../../../src/http/parse-json.js'

const RUNS = Number(process.env.FUZZ_RUNS ?? 1000)
const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })

t.test('parseExact keeps ids exact on both paths', async (t) => {
  t.same(parseExact('[{"id":9007199254740993,"name":"a"},{"id":-9223372036854775808,"name":"b"},{"id":7,"name":"c"}]'),
    [{ id: 9007199254740993n, name: 'a' }, { id: -9223372036854775808n, name: 'b' }, { id: 7, name: 'c' }])
  t.strictSame(parseExact('{"name":"Fern","n":12345}'), { name: 'Fern', n: 12345 }, 'JSON.parse reads a text with nothing to round')
  t.notOk(mayRound('{"id":123456789012345}'), 'fifteen digits are exact in a double: the cheap path')
  t.ok(mayRound('{"id":9007199254740993}'))
  t.ok(mayRound('[1e3]'), 'an exponent takes the exact reader')
  t.throws(() => parseExact('{"a":'), SyntaxError, 'the cheap path throws JSON.parse\'s error')
  t.throws(() => parseExact('{"a":12345678901234567890'), JsonBodyError, 'the exact reader throws its own')
})

t.test('stringifyExact writes a BigInt as the integer it is', async (t) => {
  t.equal(stringifyExact({ id: 9007199254740993n, name: 'Fern', tag: undefined }), '{"id":9007199254740993,"name":"Fern"}')
  t.equal(stringifyExact([-(2n ** 63n), 2n ** 63n - 1n, undefined, () => 1]), '[-9223372036854775808,9223372036854775807,null,null]')
  t.equal(stringifyExact({ at: new Date(0), nested: { list: [{ id: 1n }] }, s: 'q"\u2028' }),
    '{"at":"1970-01-01T00:00:00.000Z","nested":{"list":[{"id":1}]},"s":"q\\"\u2028"}')
  t.equal(stringifyExact(undefined), 'null', 'always a JSON text')
})

t.test('without BigInts, stringifyExact is JSON.stringify', async (t) => {
  fc.assert(fc.property(fc.jsonValue(), (value) => stringifyExact(value) === JSON.stringify(value)), { numRuns: RUNS })
})

t.test('every int64, written and read back, is the same id', async (t) => {
  fc.assert(fc.property(int64, fc.string(), (id, name) => {
    const read = parseExact(stringifyExact({ id, name })) as { id: number | bigint, name: string }
    return BigInt(read.id) === id && read.name === name
  }), { numRuns: RUNS })
})
