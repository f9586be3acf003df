import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Plant } from '../../schemas/plant.js'
import { HttpError } from '../../src/http/errors.js'
import { plantEtag } from '../../src/store/etag.js'

// RFC 9110 §8.8.3: entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE, in a comma-separated list
// whose empty elements are allowed; `*` alone stands for any current representation.
const ELEMENT = /[ \t]*(?:(W\/)?"([\x21\x23-\x7E\x80-\xFF]*)")?[ \t]*(?:,|$)/y

interface EntityTag { weak: boolean, opaque: string }

/** A precondition header: `*`, the entity tags it lists, or undefined when the request has none. */
function readTags (request: FastifyRequest, name: 'if-match' | 'if-none-match'): '*' | EntityTag[] | undefined {
  const header = request.headers[name]
  if (header === undefined) return undefined
  if (header.trim() === '*') return '*'
  const tags: EntityTag[] = []
  ELEMENT.lastIndex = 0
  while (ELEMENT.lastIndex < header.length) {
    const start = ELEMENT.lastIndex
    const element = ELEMENT.exec(header)
    if (element === null || ELEMENT.lastIndex === start) {
      throw new HttpError(400, `headers/${name} must be * or a comma-separated list of entity tags ("…" or W/"…").`)
    }
    if (element[2] !== undefined) tags.push({ weak: element[1] !== undefined, opaque: element[2] })
  }
  return tags
}

/**
 * The If-Match of a change: undefined when there is none (the change is unconditional), `*`
 * (any plant that exists), or the strong tags it lists, without their quotes (a weak tag
 * never matches: RFC 9110 §13.1.1 compares strongly).
 */
export function ifMatch (request: FastifyRequest): '*' | string[] | undefined {
  const tags = readTags(request, 'if-match')
  return tags === undefined || tags === '*' ? tags : tags.filter((tag) => !tag.weak).map((tag) => tag.opaque)
}

/** Whether a read's If-None-Match names the plant's current ETag (or is `*`): compared weakly, as RFC 9110 §13.1.2 says. */
export function noneMatch (request: FastifyRequest, etag: string): boolean {
  const tags = readTags(request, 'if-none-match')
  return tags === '*' || (tags !== undefined && tags.some((tag) => tag.opaque === etag))
}

export const preconditionFailed = (id: bigint): HttpError => new HttpError(412,
  `Plant ${id} is not as the If-Match header expects (it has changed, or is gone): read it again, then retry; nothing was changed.`)

/** Sets the plant's ETag on the answer, and gives the plant back for the body. */
export function withEtag (reply: FastifyReply, plant: Plant): Plant {
  reply.header('etag', `"${plantEtag(plant)}"`)
  return plant
}
