import { JsonBodyError, JsonFraction, MAX_DEPTH, tooDeep } from './json-errors.js'

const NUMBER = /-?(0|[1-9]\d*)(?:\.(\d+))?(?:[eE]([+-]?\d+))?/y
const HEX4 = /^[0-9a-fA-F]{4}$/
const ESCAPES = '"\\/bfnrt'

/** The value of a number literal, decided by its exact decimal value. */
function numberValue (token: string, integer: string, fraction: string, exponent: string): number | bigint | JsonFraction {
  const double = Number(token)
  if (exponent === '' && fraction === '' && integer.length < 16) return double
  const digits = integer + fraction
  let end = digits.length
  while (end > 0 && digits.charCodeAt(end - 1) === 48) end--
  let start = 0
  while (start < end && digits.charCodeAt(start) === 48) start++
  if (start === end) return double
  // The value is digits[start, end) times ten to this power.
  const scale = Number(exponent === '' ? 0 : exponent) - fraction.length + (digits.length - end)
  if (scale < 0) return Number.isInteger(double) ? new JsonFraction(token) : double
  if (!Number.isFinite(double)) return double
  // Finite and whole: at most 309 digits, so the BigInt is small.
  const magnitude = BigInt(digits.slice(start, end)) * 10n ** BigInt(scale)
  if (magnitude <= BigInt(Number.MAX_SAFE_INTEGER)) return double
  return token.charCodeAt(0) === 45 ? -magnitude : magnitude
}

/** A strict JSON reader (RFC 8259) that keeps numbers exact. */
export function readJson (text: string): unknown {
  let i = 0

  function syntaxError (): JsonBodyError {
    return new JsonBodyError(i >= text.length
      ? `The request body is not valid JSON: it ends at position ${i}, before the JSON is complete.`
      : `The request body is not valid JSON: unexpected character at position ${i}.`)
  }

  function skipSpace (): void {
    let c = text.charCodeAt(i)
    while (c === 32 || c === 10 || c === 13 || c === 9) c = text.charCodeAt(++i)
  }

  function expect (char: string): void {
    if (text[i] !== char) throw syntaxError()
    i++
  }

  function readString (): string {
    const start = i
    let escaped = false
    expect('"')
    for (let c = text.charCodeAt(i); c !== 34; c = text.charCodeAt(i)) {
      if (c === 92) {
        escaped = true
        i++
        if (text[i] === 'u' && HEX4.test(text.slice(i + 1, i + 5))) i += 5
        else if (i < text.length && ESCAPES.includes(text[i])) i++
        else throw syntaxError()
      } else if (c >= 32) {
        i++
      } else {
        throw syntaxError() // a control character, or the end of the text (NaN)
      }
    }
    i++
    return escaped ? JSON.parse(text.slice(start, i)) as string : text.slice(start + 1, i - 1)
  }

  function readNumber (): number | bigint | JsonFraction {
    NUMBER.lastIndex = i
    const match = NUMBER.exec(text)
    if (match === null) throw syntaxError()
    i = NUMBER.lastIndex
    return numberValue(match[0], match[1], match[2] ?? '', match[3] ?? '')
  }

  function readWord<T> (word: string, value: T): T {
    if (!text.startsWith(word, i)) throw syntaxError()
    i += word.length
    return value
  }

  function readObject (depth: number): Record<string, unknown> {
    if (depth > MAX_DEPTH) throw tooDeep()
    const object: Record<string, unknown> = {}
    expect('{')
    skipSpace()
    if (text[i] === '}') {
      i++
      return object
    }
    for (;;) {
      skipSpace()
      const key = readString()
      skipSpace()
      expect(':')
      const value = readValue(depth)
      // An own property, as JSON.parse makes it, never the object's prototype.
      if (key === '__proto__') Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true })
      else object[key] = value
      skipSpace()
      if (text[i] === '}') break
      expect(',')
    }
    i++
    return object
  }

  function readArray (depth: number): unknown[] {
    if (depth > MAX_DEPTH) throw tooDeep()
    const array: unknown[] = []
    expect('[')
    skipSpace()
    if (text[i] === ']') {
      i++
      return array
    }
    for (;;) {
      array.push(readValue(depth))
      skipSpace()
      if (text[i] === ']') break
      expect(',')
    }
    i++
    return array
  }

  function readValue (depth: number): unknown {
    skipSpace()
    switch (text[i]) {
      case '{': return readObject(depth + 1)
      case '[': return readArray(depth + 1)
      case '"': return readString()
      case 't': return readWord('true', true)
      case 'f': return readWord('false', false)
      case 'n': return readWord('null', null)
      default: return readNumber()
    }
  }

  const value = readValue(0)
  skipSpace()
  if (i < text.length) throw syntaxError()
  return value
}
