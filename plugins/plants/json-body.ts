import type { FastifyInstance } from 'fastify'
import { HttpError } from '../../src/errors.js'
import { parseJson } from '../../src/json/parse.js'

/**
 * Makes JSON the only body the scope accepts (anything else is a 415), parsed
 * so that int64 ids stay exact. Set in the plants scope only: a host keeps its parsers.
 */
export function acceptJsonBodies (fastify: FastifyInstance): void {
  fastify.removeAllContentTypeParsers()
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    if (body === '') return done(new HttpError(400, 'The request body is empty: send a JSON object.'), undefined)
    try {
      done(null, parseJson(body as string))
    } catch (err) {
      done(new HttpError(400, `The request body is not valid JSON: ${(err as Error).message}`), undefined)
    }
  })
}
