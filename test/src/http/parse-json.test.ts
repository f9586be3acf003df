import t from 'tap'
import { JsonBodyError, JsonFraction, MAX_DEPTH, parseJson } from '../../../src/http/parse-json.js'

t.test('ordinary JSON parses as JSON.parse does', async (t) => {
  for (const text of ['{"a":1,"b":[true,false,null],"c":"x"}', '[]', '"s"', '12', '{"n":123456789012345}', '-0', '[0.5,-1.25]']) {
    t.strictSame(parseJson(text), JSON.parse(text), text)
  }
})

t.test('integers beyond 2^53 come back exact, as BigInt', async (t) => {
  t.same(parseJson('{"id":9007199254740993}'), { id: 9007199254740993n })
  t.same(parseJson('{"id":-9223372036854775808}'), { id: -9223372036854775808n })
  t.same(parseJson('[9007199254740993,1,-2]'), [9007199254740993n, 1, -2], 'small integers stay numbers')
  t.same(parseJson('{"id":9007199254740991}'), { id: 9007199254740991 }, 'the largest safe integer stays a number')
})

t.test('the exact decimal value of a literal decides, never a rounded double', async (t) => {
  const cases: Array<[string, unknown]> = [
    ['10.0', 10], ['1e15', 1e15], ['1e18', 10n ** 18n], ['-1E+18', -(10n ** 18n)], ['0.1e1', 1], ['-0.0e5', -0],
    ['1000000000000000.000', 1e15], ['9007199254740993.000e0', 9007199254740993n], ['12345678901234567890e-1', 1234567890123456789n],
    ['1e400', Infinity], ['-1e999999999999999999999', -Infinity], [`1${'0'.repeat(400)}`, Infinity],
    ['4503599627370497.5', new JsonFraction('4503599627370497.5')], ['1e-400', new JsonFraction('1e-400')],
    ['123456789.0000000001', new JsonFraction('123456789.0000000001')], ['-1e-99999999999999999999', new JsonFraction('-1e-99999999999999999999')],
    ['0.30000000000000004441', 0.30000000000000004], ['1.5e-7', 1.5e-7], ['12345678.12345678', 12345678.12345678]
  ]
  for (const [literal, value] of cases) t.strictSame(parseJson(`[${literal}]`), [value], literal)
})

t.test('the exact reader gives every other value as JSON.parse does', async (t) => {
  const text = ' { "big" : 12345678901234567890 , "list" : [ 1.5 , -2e3 , 1E+2 , 0 , true , false , null , { } , [ ] ] ,' +
    ' "s" : "q\\"uote\\\\ \\u00e9 \\n \\/ \\b \\f \\r \\t \\ud800" , "nested" : { "a" : { "b" : [ "x" ] } } , "f" : 12345678901234567.5 , "e" : 1e19 } '
  t.same(parseJson(text), {
    big: 12345678901234567890n,
    list: [1.5, -2000, 100, 0, true, false, null, {}, []],
    s: 'q"uote\\ é \n / \b \f \r \t \ud800',
    nested: { a: { b: ['x'] } },
    f: new JsonFraction('12345678901234567.5'),
    e: 10n ** 19n
  })
  t.same(parseJson('\t\r\n[12345678901234567890]\n'), [12345678901234567890n])
  t.same(parseJson('{"a":1,"a":12345678901234567890}'), { a: 12345678901234567890n }, 'the last of a repeated key wins')
})

t.test('a digit run inside a string alone takes the exact reader harmlessly', async (t) => {
  t.same(parseJson('{"tag":"12345678901234567890"}'), { tag: '12345678901234567890' })
})

t.test('a syntax error names its position, never the engine\'s message, on both paths', async (t) => {
  const cases: Array<[string, string]> = [
    ['{"a":', 'it ends at position 5, before the JSON is complete'], ['{"a":12345678901234567890', 'it ends at position 25, before'],
    ['', 'it ends at position 0'], ['   ', 'it ends at position 3'], ['"abc', 'it ends at position 4'], ['"\\', 'it ends at position 2'],
    ['[1,]', 'unexpected character at position 3'], ['{"a" 1}', 'unexpected character at position 5'], ['{1:2}', 'unexpected character at position 1'],
    ['[01]', 'unexpected character at position 2'], ['[1.]', 'unexpected character at position 2'], ['"\\u12x4"', 'unexpected character at position 2'],
    ['"\\x"', 'unexpected character at position 2'], ['"a\nb"', 'unexpected character at position 2'], ['tru', 'unexpected character at position 0'],
    ['[1] 2', 'unexpected character at position 4'], ['{"a":1,}', 'unexpected character at position 7'], ['[1 2]', 'unexpected character at position 3']
  ]
  for (const [text, message] of cases) {
    for (const variant of [text, `[12345678901234567890,${text}`]) {
      const err = t.throws(() => parseJson(variant), JsonBodyError, JSON.stringify(variant)) as Error
      t.match(err.message, /^The request body is not valid JSON: /)
      if (variant === text) t.match(err.message, message, JSON.stringify(text))
    }
  }
})

t.test('a byte order mark is refused by name', async (t) => {
  for (const text of ['\ufeff{}', '\ufeff[12345678901234567890]']) {
    t.throws(() => parseJson(text), { name: 'JsonBodyError', message: /^The request body starts with a byte order mark/ })
  }
})

t.test(`nesting deeper than ${MAX_DEPTH} levels is refused, on both paths`, async (t) => {
  const nest = (levels: number, inner: string) => '[{"a":'.repeat(levels / 2) + inner + '}]'.repeat(levels / 2)
  for (const inner of ['1', '12345678901234567890']) {
    t.ok(parseJson(nest(MAX_DEPTH, inner)), `${MAX_DEPTH} levels`)
    const objects = '{"a":'.repeat(MAX_DEPTH + 1) + inner + '}'.repeat(MAX_DEPTH + 1)
    for (const text of [nest(MAX_DEPTH + 2, inner), nest(200_000, inner), objects]) {
      t.throws(() => parseJson(text), { name: 'JsonBodyError', message: `The request body nests arrays and objects deeper than ${MAX_DEPTH} levels.` })
    }
  }
  t.ok(parseJson(`[${'[1],'.repeat(100_000)}1]`), 'a long array is not a deep one')
  t.ok(parseJson(`${'['.repeat(MAX_DEPTH)}"[[{\\"\\\\"${']'.repeat(MAX_DEPTH)}`), 'brackets in a string do not count')
  // A repeated key drops the deep value but not its nesting: refused by the text, as the exact reader does.
  for (const inner of ['1', '12345678901234567890']) {
    t.throws(() => parseJson(`${'['.repeat(MAX_DEPTH - 1)}{"a":[${inner}],"a":true}${']'.repeat(MAX_DEPTH - 1)}`), { message: /deeper than 64/ })
  }
})

t.test('prototype poisoning is refused, on both paths', async (t) => {
  for (const text of ['{"__proto__":{"x":1}}', '{"id":12345678901234567890,"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}',
    '[{"\\u005f_proto__":1}]', '{"a":12345678901234567890,"b":{"constructor":{"prototype":1}}}']) {
    t.throws(() => parseJson(text), { name: 'JsonBodyError', message: /forbidden prototype property/ }, text)
  }
  t.equal(({} as Record<string, unknown>).x, undefined)
})

t.test('on the exact path, a text that only looks as if it held a prototype property is read', async (t) => {
  const value = parseJson('{"id":12345678901234567890,"name":"\\u0041__proto__","constructor":{"x":1}}') as Record<string, unknown>
  t.equal(value.id, 12345678901234567890n)
  t.equal(value.name, 'A__proto__')
  t.same(Object.entries(value.constructor as object), [['x', 1]])
})
