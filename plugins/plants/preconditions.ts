import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Plant } from '../../schemas/plant.js'
import { HttpError } from '../../src/http/errors.js'
import { plantEtag } from '../../src/store/etag.js'
import type { ChangeOptions, PlantStore } from '../../src/store/types.js'
import { noPlant } from './responses.js'

// RFC 9110 §8.8.3: entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE.
const OPAQUE = /^[\x21\x23-\x7E\x80-\xFF]*$/

export interface EntityTag { weak: boolean, opaque: string }

const isSpace = (char: string | undefined): boolean => char === ' ' || char === '\t'

/** A precondition header read in one pass, each character once. */
export function parseEntityTags (header: string): '*' | EntityTag[] | undefined {
  if (header.trim() === '*') return '*'
  const tags: EntityTag[] = []
  let i = 0
  while (i < header.length) {
    while (isSpace(header[i])) i++
    if (i === header.length) break
    if (header[i] === ',') { i++; continue }
    const weak = header.startsWith('W/', i)
    if (weak) i += 2
    if (header[i] !== '"') return undefined
    // etagc has no DQUOTE: the next one closes the tag.
    const close = header.indexOf('"', i + 1)
    if (close === -1) return undefined
    const opaque = header.slice(i + 1, close)
    if (!OPAQUE.test(opaque)) return undefined
    tags.push({ weak, opaque })
    i = close + 1
    while (isSpace(header[i])) i++
    if (i < header.length && header[i] !== ',') return undefined
  }
  return tags
}

type Condition = '*' | readonly string[] | undefined

function readTags (request: FastifyRequest, name: 'if-match' | 'if-none-match'): '*' | EntityTag[] | undefined {
  const header = request.headers[name]
  if (header === undefined) return undefined
  const tags = parseEntityTags(header)
  if (tags === undefined) throw new HttpError(400, `headers/${name} must be * or a comma-separated list of entity tags ("…" or W/"…").`)
  return tags
}

/** A request's preconditions (RFC 9110 §13.1): undefined where it sends none. */
export interface Conditions {
  /** `*` (any plant that exists), or the strong tags listed, unquoted. */
  ifMatch: Condition
  /** `*`, or the tags listed, unquoted and without W/ (§13.1.2 compares weakly). */
  ifNoneMatch: Condition
}

/** Reads If-Match and If-None-Match; either malformed is a 400. */
export function conditionsOf (request: FastifyRequest): Conditions {
  const match = readTags(request, 'if-match')
  const noneMatch = readTags(request, 'if-none-match')
  return {
    ifMatch: match === undefined || match === '*' ? match : match.filter((tag) => !tag.weak).map((tag) => tag.opaque),
    ifNoneMatch: noneMatch === undefined || noneMatch === '*' ? noneMatch : noneMatch.map((tag) => tag.opaque)
  }
}

/** Whether a plant whose ETag is `etag` (undefined: none) meets the condition. */
export function names (condition: '*' | readonly string[], etag: string | undefined): boolean {
  return etag !== undefined && (condition === '*' || condition.includes(etag))
}

export const preconditionFailed = (id: bigint): HttpError => new HttpError(412,
  `Plant ${id} is not as the If-Match header expects (it has changed, or is gone): read it again, then retry; nothing was changed.`)

export const noneMatchFailed = (id: bigint): HttpError => new HttpError(412,
  `Plant ${id} is as the If-None-Match header names (it exists, with an ETag listed or *): nothing was changed.`)

export const readPreconditionFailed = (id: bigint): HttpError => new HttpError(412,
  `Plant ${id} is not as the If-Match header expects (it has changed, or is gone): read it without If-Match to see it as it is.`)

/** The answer to a change that changed nothing. */
export function unchanged (id: bigint, { ifMatch }: Conditions, refused: boolean): HttpError {
  return refused ? noneMatchFailed(id) : ifMatch !== undefined ? preconditionFailed(id) : noPlant(id)
}

/** A change's conditions as the store checks them, in the statement that writes (If-Match, then If-None-Match). */
export async function storeConditions (store: Pick<PlantStore, 'get'>, id: bigint, conditions: Conditions): Promise<Pick<ChangeOptions, 'ifMatch' | 'ifNoneMatch'>> {
  const { ifMatch, ifNoneMatch } = conditions
  if (ifNoneMatch === '*') {
    const plant = await store.get(id)
    if (plant === undefined) throw unchanged(id, conditions, false)
    throw ifMatch !== undefined && !names(ifMatch, plantEtag(plant)) ? preconditionFailed(id) : noneMatchFailed(id)
  }
  return { ifMatch: ifMatch === '*' ? undefined : ifMatch, ifNoneMatch }
}

/** Sets the plant's ETag on the answer, and gives the plant back for the body. */
export function withEtag (reply: FastifyReply, plant: Plant): Plant {
  reply.header('etag', `"${plantEtag(plant)}"`)
  return plant
}
