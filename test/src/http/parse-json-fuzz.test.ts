import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import t from 'tap'
import { JsonBodyError, JsonFraction, MAX_DEPTH, parseJson } from '../../../src/http/parse-json.js'
import { readJson } from '../../../src/shared/read-json.js'

// FUZZ_RUNS=200000 for a long run; npm test makes a bounded one.
const RUNS = Number(process.env.FUZZ_RUNS ?? 3000)

// The reference is built on other principles than the reader under test: a
// regular-expression tokenizer and an explicit stack instead of recursive
// descent, and exact rational arithmetic (a BigInt numerator over a power of
// ten) instead of trimming digit strings. JSON.parse checks its grammar below.
// eslint-disable-next-line no-control-regex -- JSON strings exclude the control characters by name
const TOKEN = /[ \t\n\r]+|([{}[\]:,])|("(?:[^"\\\u0000-\u001f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*")|(-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)|(true|false|null)/y
const LITERAL = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/
const WORDS: Record<string, unknown> = { true: true, false: false, null: null }
type Reason = 'syntax' | 'depth' | 'proto'
type Outcome = { ok: true, value: unknown } | { ok: false, reason: Reason }

function exactNumber (token: string): unknown {
  const double = Number(token)
  const [, integer, fraction = '', exponent = '0'] = LITERAL.exec(token) as RegExpExecArray
  const numerator = BigInt(integer + fraction)
  if (numerator === 0n) return double
  const power = BigInt(exponent) - BigInt(fraction.length)
  let whole: bigint
  if (power >= 0n) {
    if (!Number.isFinite(double)) return double
    whole = numerator * 10n ** power
  } else {
    const divisor = -power > BigInt(integer.length + fraction.length) ? undefined : 10n ** -power
    if (divisor === undefined || numerator % divisor !== 0n) return Number.isInteger(double) ? new JsonFraction(token) : double
    whole = numerator / divisor
  }
  const signed = token.startsWith('-') ? -whole : whole
  return signed >= -BigInt(Number.MAX_SAFE_INTEGER) && signed <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(signed) : signed
}

type Expect = 'value' | 'value]' | 'key' | 'key}' | ':' | ',' | 'end'
type Frame = { array: unknown[] } | { object: Record<string, unknown>, key: string }

function reference (text: string, number: (token: string) => unknown = exactNumber): Outcome {
  const stack: Frame[] = []
  let expect: Expect = 'value'
  let root: unknown
  let tooDeep = false
  // Places a finished value; what may follow it.
  const emit = (value: unknown): Expect => {
    const top = stack.at(-1)
    if (top === undefined) root = value
    else if ('array' in top) top.array.push(value)
    else Object.defineProperty(top.object, top.key, { value, writable: true, enumerable: true, configurable: true })
    return top === undefined ? 'end' : ','
  }
  for (let i = 0; i < text.length;) {
    TOKEN.lastIndex = i
    const match = TOKEN.exec(text)
    if (match === null) return { ok: false, reason: 'syntax' }
    i = TOKEN.lastIndex
    const [, punct, string, numeral, word] = match
    if (punct === undefined && string === undefined && numeral === undefined && word === undefined) continue
    const top = stack.at(-1)
    if ((expect === 'value' || expect === 'value]') && (punct === '{' || punct === '[')) {
      stack.push(punct === '[' ? { array: [] } : { object: {}, key: '' })
      tooDeep ||= stack.length > MAX_DEPTH
      expect = punct === '[' ? 'value]' : 'key}'
    } else if ((expect === 'value' || expect === 'value]') && punct === undefined) {
      expect = emit(string !== undefined ? JSON.parse(string) : numeral !== undefined ? number(numeral) : WORDS[word])
    } else if ((expect === 'key' || expect === 'key}') && string !== undefined) {
      (top as { key: string }).key = JSON.parse(string)
      expect = ':'
    } else if (expect === ':' && punct === ':') {
      expect = 'value'
    } else if (expect === ',' && punct === ',') {
      expect = top !== undefined && 'array' in top ? 'value' : 'key'
    } else if ((expect === ',' || expect === 'value]' || expect === 'key}') && top !== undefined &&
      ((punct === ']' && 'array' in top && expect !== 'key}') || (punct === '}' && 'object' in top && expect !== 'value]'))) {
      stack.pop()
      expect = emit('array' in top ? top.array : top.object)
    } else {
      return { ok: false, reason: 'syntax' }
    }
  }
  if (expect !== 'end') return { ok: false, reason: 'syntax' }
  return tooDeep ? { ok: false, reason: 'depth' } : { ok: true, value: root }
}

// secure-json-parse's rule: an own __proto__ key, or a constructor object with an own prototype.
function poisoned (value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false
  const own = (o: object, key: string) => Object.prototype.hasOwnProperty.call(o, key)
  const ctor = (value as Record<string, unknown>).constructor
  if (own(value, '__proto__') || (own(value, 'constructor') && typeof ctor === 'object' && ctor !== null && own(ctor, 'prototype'))) return true
  return Object.values(value).some(poisoned)
}

function outcome (parse: (text: string) => unknown, text: string): Outcome {
  try {
    return { ok: true, value: parse(text) }
  } catch (err) {
    if (!(err instanceof JsonBodyError) || !err.message.startsWith('The request body ')) throw err
    return { ok: false, reason: /deeper/.test(err.message) ? 'depth' : /prototype/.test(err.message) ? 'proto' : 'syntax' }
  }
}

const ws = fc.constantFrom('', '', '', ' ', '\n', '\t', ' \r\n ')
const digits = (min: number, max: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max })
const integer = fc.oneof(fc.constant('0'), fc.tuple(fc.constantFrom(...'123456789'), digits(0, 30)).map(([a, b]) => a + b))
const exponentDigits = fc.oneof(digits(1, 3), fc.constantFrom('15', '18', '19', '308', '309', '324', '400', '0000000000000000000001', '99999999999999999999999'))
const numberText = fc.oneof(
  fc.tuple(fc.constantFrom('', '-'), integer, fc.option(digits(1, 25)), fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), exponentDigits)))
    .map(([sign, int, frac, exp]) => sign + int + (frac === null ? '' : `.${frac}`) + (exp === null ? '' : exp.join(''))),
  fc.constantFrom('4503599627370497.5', '1e-400', '1e18', '10.0', '-0', '0.1e1', '9223372036854775808', '123456789.0000000001', '1e400', '5e-324',
    '9007199254740991', '-9007199254740991', '9007199254740992', '900719925474099.1e1', '12345678.12345678'),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(String)
)
const stringText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 6 }).map((s) => JSON.stringify(s)),
  fc.array(fc.oneof(
    fc.constantFrom('a', 'é', '🌱', '\\n', '\\"', '\\\\', '\\/', '\\b', '\\u0000', '\\ud800', '\\udc00', '\\uD83C\\uDF31', '1234567890123456', '1e5'),
    fc.integer({ min: 0, max: 0xffff }).map((c) => `\\u${c.toString(16).padStart(4, '0')}`)
  ), { maxLength: 5 }).map((parts) => `"${parts.join('')}"`)
)
const keyText = fc.oneof(stringText, fc.constantFrom('"__proto__"', '"constructor"', '"prototype"', '"\\u005f_proto__"', '"id"', '"a"'))
const spaced = (text: fc.Arbitrary<string>) => fc.tuple(ws, text, ws).map(([a, x, b]) => a + x + b)
const { value } = fc.letrec<{ value: string, array: string, object: string }>((tie) => ({
  value: spaced(fc.oneof({ depthSize: 'small' }, numberText, stringText, fc.constantFrom('true', 'false', 'null'), tie('array'), tie('object'))),
  array: fc.array(tie('value'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
  object: fc.array(fc.tuple(spaced(keyText), tie('value')), { maxLength: 4 }).map((members) => `{${members.map(([k, v]) => `${k}:${v}`).join(',')}}`)
}))
const deep = fc.tuple(fc.integer({ min: MAX_DEPTH - 2, max: MAX_DEPTH + 2 }), fc.constantFrom(['[', ']'], ['{"a":', '}'], ['[{"k":', '}]']), value)
  .map(([n, [open, close], inner]) => open.repeat(n) + inner + close.repeat(n))
const noise = fc.constantFrom('', '"', '\\', '{', '}', '[', ']', ',', ':', '-', '+', '.', 'e', '0', '1', ' ', '\u0000', '\u001f', '\u007f', '\u00a0', '\ufeff', 'x', 'tru', '01', '\\u12')
const mutated = fc.tuple(fc.oneof(value, deep), fc.nat(), fc.nat(3), noise).map(([text, at, mode, bit]) => {
  const i = at % (text.length + 1)
  return mode === 0 ? text.slice(0, i) : text.slice(0, i) + bit + text.slice(i + (mode === 1 ? 1 : 0))
})
const generated = fc.oneof(value, value, deep, mutated, mutated, value.map((text) => `\ufeff${text}`))

// V8 in Node.js 24.21 misreads an object key once another object of the same shape so far
// has had, at that place, a key that ends in a backslash: `{"a":1,"x\\":1}` parsed first,
// `{"a":1,"x\"":1}` (the key x") comes back with the key x\. JSON.parse is the oracle
// here and the service's parser stands on it, so on an engine with that bug the fuzz leaves
// out texts with such keys (found by this test, in one CI run on Node.js 24.21).
// The service is not exposed in practice: the misread key is the earlier one, which ends
// in a backslash and so is in no schema (it is dropped, and a missing `name` is a 400),
// and only a key written with an escape where that one has its backslash is misread.
function misreadsKeys (): boolean {
  JSON.parse('{"fuzz-probe":1,"x\\\\":1}')
  return Object.keys(JSON.parse('{"fuzz-probe":1,"x\\"":1}'))[1] !== 'x"'
}
const KEY_ENDS_IN_BACKSLASH = /(?:\\\\|\\u005[cC])"\s*:/
const documents = misreadsKeys() ? generated.filter((text) => !KEY_ENDS_IN_BACKSLASH.test(text)) : generated

t.test('the reference agrees with JSON.parse on grammar and, reading numbers as doubles, on values', async (t) => {
  fc.assert(fc.property(documents, (text) => {
    let engine: { value: unknown } | undefined
    try {
      engine = { value: JSON.parse(text) }
    } catch {}
    const plain = reference(text, Number)
    // The reference refuses for depth only a text whose grammar it accepted.
    if ((plain.ok || plain.reason === 'depth') !== (engine !== undefined)) return false
    return !plain.ok || isDeepStrictEqual(plain.value, engine?.value)
  }), { numRuns: RUNS })
  t.pass(`${RUNS} documents`)
})

t.test('parseJson and its exact reader agree with the reference: same decision, same values', async (t) => {
  fc.assert(fc.property(documents, (text) => {
    const expected = reference(text)
    const bom = text.startsWith('\ufeff')
    const parsed = outcome(parseJson, text)
    const read = outcome(readJson, text)
    const wanted: Outcome = bom ? { ok: false, reason: 'syntax' } : expected.ok && poisoned(expected.value) ? { ok: false, reason: 'proto' } : expected
    // Refusals agree in kind where only one rule applies; a text may break several.
    const sameDecision = (a: Outcome, b: Outcome) => a.ok === b.ok && (a.ok ? isDeepStrictEqual(a.value, (b as { value: unknown }).value) : true)
    return sameDecision(parsed, wanted) && sameDecision(read, bom ? wanted : expected)
  }), { numRuns: RUNS })
  t.pass(`${RUNS} documents`)
})
