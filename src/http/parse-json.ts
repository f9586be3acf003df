import secureJson from 'secure-json-parse'
import { JsonBodyError, MAX_DEPTH, tooDeep } from '../shared/json-errors.js'
import { mayRound } from '../shared/exact-json.js'
import { readJson } from '../shared/read-json.js'

export { JsonBodyError, JsonFraction, MAX_DEPTH } from '../shared/json-errors.js'

const POISON = { protoAction: 'error', constructorAction: 'error' } as const

/** Parses a JSON text with the prototype-poisoning checks of Fastify's own parser. */
export function parseJson (text: string): unknown {
  if (text.charCodeAt(0) === 0xFEFF) {
    throw new JsonBodyError('The request body starts with a byte order mark (U+FEFF): send the JSON without one.')
  }
  // A text the exact reader must read anyway is read by it alone.
  if (mayRound(text)) {
    const exact = readJson(text)
    if (mayHoldPrototype(text)) scan(exact)
    return exact
  }
  let value: unknown
  try {
    value = secureJson.parse(text, undefined, POISON)
  } catch {
    // The exact reader names the position of a syntax error.
    readJson(text)
    throw forbidden()
  }
  // Each level takes two characters at least: a short text cannot be too deep.
  if (text.length > 2 * MAX_DEPTH) checkDepth(text)
  return value
}

const forbidden = (): JsonBodyError => new JsonBodyError('The request body has a forbidden prototype property (__proto__, or constructor.prototype).')

// Only a text with one of these can have a key `__proto__` or `constructor` (a \u escape may spell either).
const mayHoldPrototype = (text: string): boolean => text.includes('__proto__') || text.includes('constructor') || text.includes('\\u')

function scan (value: unknown): void {
  try {
    secureJson.scan(value as object, POISON)
  } catch {
    throw forbidden()
  }
}

const STRUCTURE = /["[\]{}]/g

// Counted on the text, as the exact reader counts it, not on the value.
function checkDepth (text: string): void {
  let depth = 0
  STRUCTURE.lastIndex = 0
  for (let match = STRUCTURE.exec(text); match !== null; match = STRUCTURE.exec(text)) {
    const char = match[0]
    if (char === '"') STRUCTURE.lastIndex = endOfString(text, match.index) + 1
    else if (char === '[' || char === '{') depth++
    else depth--
    if (depth > MAX_DEPTH) throw tooDeep()
  }
}

// The index of the quote that closes the string opening at `start`.
function endOfString (text: string, start: number): number {
  let end = text.indexOf('"', start + 1)
  for (;;) {
    let backslashes = 0
    while (text.charCodeAt(end - 1 - backslashes) === 92) backslashes++
    if (backslashes % 2 === 0) return end
    end = text.indexOf('"', end + 1)
  }
}
