/** How deep arrays and objects may nest in a JSON text. */
export const MAX_DEPTH = 64

/** A JSON text that is refused; the message is a sentence meant for the client. */
export class JsonBodyError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'JsonBodyError'
  }
}

export function tooDeep (): JsonBodyError {
  return new JsonBodyError(`The request body nests arrays and objects deeper than ${MAX_DEPTH} levels.`)
}

/**
 * A JSON number whose exact value is a fraction although the nearest double is a
 * whole number (`4503599627370497.5`, `1e-400`): kept apart so that no integer
 * check mistakes it for one. `text` is the literal as written.
 */
export class JsonFraction {
  readonly text: string
  constructor (text: string) {
    this.text = text
  }
}
