import secureJson from 'secure-json-parse'

// A run of 16 digits may be an integer beyond 2^53, which JSON.parse rounds.
const LONG_DIGITS = /\d{16}/
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y
const INTEGER = /^-?\d+$/

/**
 * Parses a JSON text with the prototype-poisoning checks of Fastify's own
 * parser. Integers that a double cannot hold exactly come back as BigInt; every
 * other value is what JSON.parse gives. Ordinary bodies take JSON.parse alone.
 */
export function parseJson (text: string): unknown {
  const value = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' })
  return LONG_DIGITS.test(text) ? parseExact(text) : value
}

// Reads a text that secure-json-parse has already accepted: it is valid JSON
// and has no `__proto__` key, so this reader needs no error paths of its own.
function parseExact (text: string): unknown {
  let i = 0

  function skipSpace (): void {
    while (text[i] === ' ' || text[i] === '\n' || text[i] === '\r' || text[i] === '\t') i++
  }

  function readString (): string {
    let end = i + 1
    while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1
    const value = JSON.parse(text.slice(i, end + 1)) as string
    i = end + 1
    return value
  }

  function readNumber (): number | bigint {
    NUMBER.lastIndex = i
    const token = (NUMBER.exec(text) as RegExpExecArray)[0]
    i += token.length
    const value = Number(token)
    return INTEGER.test(token) && !Number.isSafeInteger(value) ? BigInt(token) : value
  }

  function readValue (): unknown {
    skipSpace()
    switch (text[i]) {
      case '{': {
        i++
        const object: Record<string, unknown> = {}
        skipSpace()
        while (text[i] !== '}') {
          skipSpace()
          const key = readString()
          skipSpace()
          i++ // ':'
          object[key] = readValue()
          skipSpace()
          if (text[i] === ',') i++
        }
        i++
        return object
      }
      case '[': {
        i++
        const array: unknown[] = []
        skipSpace()
        while (text[i] !== ']') {
          array.push(readValue())
          skipSpace()
          if (text[i] === ',') i++
        }
        i++
        return array
      }
      case '"': return readString()
      case 't': i += 4; return true
      case 'f': i += 5; return false
      case 'n': i += 4; return null
      default: return readNumber()
    }
  }

  return readValue()
}
