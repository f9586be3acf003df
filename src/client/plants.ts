import type { NewPlant, Plant, PlantListItem, PlantPatch } from '../../schemas/index.js'
import { stringifyExact } from '../shared/exact-json.js'
import { toId, type PlantId } from './ids.js'
import { page, walk, type Page, type Raw } from './pages.js'
import { expectEmpty, fail, readBody, type Answer, type Call, type CallOptions, type Send } from './request.js'

/** A plant to create: NewPlant, with the id in any form `PlantId` accepts. */
export type NewPlantInput = Omit<NewPlant, 'id'> & { id: PlantId }

/** A plant as an answer gave it, with the answer's ETag (quotes included). */
export type TaggedPlant = Plant & { readonly etag?: string }

export interface ReadOptions extends CallOptions {
  /** Only if the plant is as it was read: an `etag` the service gave, several, or `*` (only if it exists). */
  ifMatch?: string | readonly string[]
}

export interface ChangeOptions extends ReadOptions {
  /** Only if the plant is not as these ETags name it (`*`: only if there is none); else a 412. */
  ifNoneMatch?: string | readonly string[]
}

export interface ListQuery {
  /** Plants per page, 1 to 100 (the service's default: 20). */
  limit?: number
  /** Only plants with exactly this tag. */
  tag?: string
}

export interface PageQuery extends ListQuery {
  /** Where the page starts: a `nextCursor` of the previous page. */
  cursor?: string
}

export interface PlantsApi {
  /** Creates the plant, or finds it already there with the same content (a retry is safe). */
  create (plant: NewPlantInput, options?: CallOptions): Promise<TaggedPlant>
  get (id: PlantId, options?: ReadOptions): Promise<TaggedPlant>
  /** Changes the plant by a JSON merge patch (`tag: null` removes the tag) and gives it as it now is. */
  update (id: PlantId, patch: PlantPatch, options?: ChangeOptions): Promise<TaggedPlant>
  /** Resolves once the plant is deleted; a 404 when there was none (see docs/client.md, "Retries"). */
  delete (id: PlantId, options?: ChangeOptions): Promise<void>
  /** Every plant (or every plant of a tag) in id order, page after page, following the `next` links. */
  list (query?: ListQuery, options?: CallOptions): AsyncGenerator<PlantListItem, void, undefined>
  /** One page of plants. */
  listPage (query?: PageQuery, options?: CallOptions): Promise<Page<PlantListItem>>
}

/** The plant an answer carries, with its ETag. */
function tagged (call: Call, answer: Answer): TaggedPlant {
  const plant = readBody(call, answer, 200)
  if (typeof plant !== 'object' || plant === null) throw fail(call, answer)
  return Object.defineProperty(plant as Plant, 'etag', { value: answer.headers.get('etag') ?? undefined })
}

/** The request headers of a call's preconditions. */
function preconditions ({ ifMatch, ifNoneMatch }: ChangeOptions): Record<string, string> {
  const headers: Record<string, string> = {}
  if (ifMatch !== undefined) headers['if-match'] = typeof ifMatch === 'string' ? ifMatch : ifMatch.join(', ')
  if (ifNoneMatch !== undefined) headers['if-none-match'] = typeof ifNoneMatch === 'string' ? ifNoneMatch : ifNoneMatch.join(', ')
  return headers
}

function listItem (raw: Raw): PlantListItem {
  return { ...raw, id: BigInt(raw.id) } as PlantListItem
}

export function plantsApi (send: Send, base: URL): PlantsApi {
  const at = (id: PlantId): URL => new URL(`plants/${toId(id)}`, base)
  const listUrl = (query: PageQuery): URL => {
    const url = new URL('plants', base)
    for (const key of ['limit', 'tag', 'cursor'] as const) {
      if (query[key] !== undefined) url.searchParams.set(key, String(query[key]))
    }
    return url
  }

  return {
    async create ({ id, name, tag }, options) {
      const body = stringifyExact({ id: toId(id), name, tag })
      const call: Call = { method: 'POST', url: new URL('plants', base), body, repeat: 'idempotent' }
      return tagged(call, await send(call, options))
    },
    async get (id, options = {}) {
      const call: Call = { method: 'GET', url: at(id), headers: preconditions(options), repeat: 'idempotent' }
      return tagged(call, await send(call, options))
    },
    async update (id, { name, tag }, options = {}) {
      // Applying a merge patch twice is applying it once: retried like a create.
      const headers = { 'content-type': 'application/merge-patch+json', ...preconditions(options) }
      const call: Call = { method: 'PATCH', url: at(id), body: stringifyExact({ name, tag }), headers, repeat: 'idempotent' }
      return tagged(call, await send(call, options))
    },
    async delete (id, options = {}) {
      const call: Call = { method: 'DELETE', url: at(id), headers: preconditions(options), repeat: 'idempotent' }
      expectEmpty(call, await send(call, options), 204)
    },
    list (query = {}, options) {
      return walk(send, listUrl({ limit: query.limit, tag: query.tag }), listItem, options)
    },
    listPage (query = {}, options) {
      return page(send, listUrl(query), listItem, options)
    }
  }
}
