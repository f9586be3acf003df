import type { FastifyBodyParser, FastifyInstance, FastifyRequest } from 'fastify'
import { HttpError } from './errors.js'
import { parseJson } from './parse-json.js'

// Fatal: bytes that are not UTF-8 are refused.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
const CHARSET = /;\s*charset\s*=([^;]*)/gi

/** Why the body cannot be read as it is labelled (a 415), or undefined. */
function unreadable (request: FastifyRequest): string | undefined {
  if (request.headers['content-encoding'] !== undefined) {
    return 'Content-Encoding is not supported: send the body uncompressed, as plain UTF-8 JSON.'
  }
  const type = request.headers['content-type'] as string
  // Most clients send no parameter at all: no need to look for one.
  if (!type.includes(';')) return undefined
  CHARSET.lastIndex = 0
  for (let match = CHARSET.exec(type); match !== null; match = CHARSET.exec(type)) {
    if (match[1].trim().replace(/^"(.*)"$/, '$1').toLowerCase() !== 'utf-8') {
      return 'Unsupported charset: send the JSON body in UTF-8 (charset=utf-8, or none).'
    }
  }
  return undefined
}

// Bodies are read whole, then decoded and parsed here (see acceptJsonBodies).
const readJsonBody: FastifyBodyParser<Buffer> = (request, body, done) => {
  const refusal = unreadable(request)
  if (refusal !== undefined) return done(new HttpError(415, refusal), undefined)
  if (body.length === 0) {
    // A route that takes no body (DELETE) accepts the empty one a client labels JSON anyway.
    if (request.routeOptions.schema?.body === undefined) return done(null, undefined)
    return done(new HttpError(400, 'The request body is empty: send a JSON object.'), undefined)
  }
  let text: string
  try {
    text = utf8.decode(body)
  } catch {
    return done(new HttpError(400, 'The request body is not valid UTF-8: send JSON encoded as UTF-8.'), undefined)
  }
  let value: unknown
  try {
    value = parseJson(text)
  } catch (err) {
    // parseJson throws JsonBodyError only, whose message is meant for the client.
    return done(new HttpError(400, (err as Error).message), undefined)
  }
  // Outside the try: what done runs next must not be answered as a bad body.
  done(null, value)
}

/** Makes JSON the only body the scope accepts. */
export function acceptJsonBodies (fastify: FastifyInstance): void {
  fastify.removeAllContentTypeParsers()
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, readJsonBody)
}

/** Takes JSON merge patches (RFC 7396) too, read exactly as JSON: for the scope of a route whose body is one. */
export function acceptMergePatches (fastify: FastifyInstance): void {
  fastify.addContentTypeParser('application/merge-patch+json', { parseAs: 'buffer' }, readJsonBody)
}
