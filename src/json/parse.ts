import secureJson from 'secure-json-parse'
import { readJson } from './read.js'
import { JsonBodyError, MAX_DEPTH, tooDeep } from './errors.js'

export { JsonBodyError, JsonFraction, MAX_DEPTH } from './errors.js'

const POISON = { protoAction: 'error', constructorAction: 'error' } as const

// A double may misjudge a literal only when it has 16 significant digits or more
// (the digits may span the point) or an exponent: only then is the exact reader needed.
const RISKY = /\d(?:\.?\d){15}|\d[eE]/

/**
 * Parses a JSON text with the prototype-poisoning checks of Fastify's own parser,
 * deciding every number by the exact decimal value of its literal: integers that a
 * double cannot hold come back as BigInt (±Infinity beyond a double's range), and a
 * fraction that the nearest double would show as whole as a JsonFraction. Every
 * other value is what JSON.parse gives. Throws JsonBodyError only, with a sentence
 * for the client. Ordinary bodies take JSON.parse alone.
 */
export function parseJson (text: string): unknown {
  if (text.charCodeAt(0) === 0xFEFF) {
    throw new JsonBodyError('The request body starts with a byte order mark (U+FEFF): send the JSON without one.')
  }
  let value: unknown
  try {
    value = secureJson.parse(text, undefined, POISON)
  } catch {
    // The exact reader names the position of a syntax error; if it finds none,
    // the text was refused for a prototype property.
    readJson(text)
    throw new JsonBodyError('The request body has a forbidden prototype property (__proto__, or constructor.prototype).')
  }
  if (RISKY.test(text)) return readJson(text)
  checkDepth(value)
  return value
}

// JSON.parse nests as deep as the text does; a body must not (the exact reader
// recurses, and so may whatever walks the body later). Level by level, no recursion.
function checkDepth (value: unknown): void {
  let level = isContainer(value) ? [value] : []
  for (let depth = 1; level.length > 0; depth++) {
    if (depth > MAX_DEPTH) throw tooDeep()
    const next: object[] = []
    for (const node of level) {
      for (const child of Object.values(node)) if (isContainer(child)) next.push(child)
    }
    level = next
  }
}

function isContainer (value: unknown): value is object {
  return typeof value === 'object' && value !== null
}
