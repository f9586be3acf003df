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

/** A JSON number whose exact value is a fraction although the nearest double is a whole number. */
export class JsonFraction {
  readonly text: string
  constructor (text: string) {
    this.text = text
  }
}
