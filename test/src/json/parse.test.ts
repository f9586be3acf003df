import t from 'tap'
import { parseJson } from '../../../src/json/parse.js'

t.test('ordinary JSON parses as JSON.parse does', async (t) => {
  for (const text of ['{"a":1,"b":[true,false,null],"c":"x"}', '[]', '"s"', '12', '{"n":123456789012345}']) {
    t.same(parseJson(text), JSON.parse(text), text)
  }
})

t.test('integers beyond 2^53 come back exact, as BigInt', async (t) => {
  t.same(parseJson('{"id":9007199254740993}'), { id: 9007199254740993n })
  t.same(parseJson('{"id":-9223372036854775808}'), { id: -9223372036854775808n })
  t.same(parseJson('[9007199254740993,1,-2]'), [9007199254740993n, 1, -2], 'small integers stay numbers')
  t.same(parseJson('{"id":9007199254740991}'), { id: 9007199254740991 }, 'the largest safe integer stays a number')
})

t.test('the exact reader gives every other value as JSON.parse does', async (t) => {
  const text = ' { "big" : 12345678901234567890 , "list" : [ 1.5 , -2e3 , 1E+2 , 0 , true , false , null , { } , [ ] ] ,' +
    ' "s" : "q\\"uote\\\\ \\u00e9 \\n" , "nested" : { "a" : { "b" : [ "x" ] } } , "f" : 12345678901234567.5 , "e" : 1e19 } '
  t.same(parseJson(text), {
    big: 12345678901234567890n,
    list: [1.5, -2000, 100, 0, true, false, null, {}, []],
    s: 'q"uote\\ é \n',
    nested: { a: { b: ['x'] } },
    f: Number('12345678901234567.5'),
    e: 1e19
  })
  t.same(parseJson('\t\r\n[12345678901234567890]\n'), [12345678901234567890n])
})

t.test('a digit run inside a string alone takes the exact reader harmlessly', async (t) => {
  t.same(parseJson('{"tag":"12345678901234567890"}'), { tag: '12345678901234567890' })
})

t.test('invalid JSON and prototype poisoning throw, on both paths', async (t) => {
  t.throws(() => parseJson('{"a":'), SyntaxError)
  t.throws(() => parseJson('{"a":12345678901234567890'), SyntaxError)
  t.throws(() => parseJson('{"__proto__":{"x":1}}'), /forbidden prototype property/)
  t.throws(() => parseJson('{"id":12345678901234567890,"__proto__":{"x":1}}'), /forbidden prototype property/)
  t.throws(() => parseJson('{"constructor":{"prototype":{"x":1}}}'), /forbidden prototype property/)
})
