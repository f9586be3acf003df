import type { NewPlant, Plant, PlantListItem } from '../../schemas/index.js'
import { stringifyExact } from '../json/exact.js'
import { toId, type PlantId } from './ids.js'
import { page, walk, type Page, type Raw } from './pages.js'
import { expectEmpty, readBody, type Call, type CallOptions, type Send } from './request.js'

/** A plant to create: NewPlant, with the id in any form `PlantId` accepts. */
export type NewPlantInput = Omit<NewPlant, 'id'> & { id: PlantId }

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
  /** Creates the plant, or finds it already there with the same content (a retry is safe); a different plant under its id is a 409. */
  create (plant: NewPlantInput, options?: CallOptions): Promise<Plant>
  get (id: PlantId, options?: CallOptions): Promise<Plant>
  /** Resolves once the plant is deleted; a 404 when there was none (see docs/client.md, "Retries"). */
  delete (id: PlantId, options?: CallOptions): Promise<void>
  /** Every plant (or every plant of a tag) in id order, page after page, following the `next` links. */
  list (query?: ListQuery, options?: CallOptions): AsyncGenerator<PlantListItem, void, undefined>
  /** One page of plants. */
  listPage (query?: PageQuery, options?: CallOptions): Promise<Page<PlantListItem>>
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
      return readBody(call, await send(call, options), 200) as Plant
    },
    async get (id, options) {
      const call: Call = { method: 'GET', url: at(id), repeat: 'idempotent' }
      return readBody(call, await send(call, options), 200) as Plant
    },
    async delete (id, options) {
      const call: Call = { method: 'DELETE', url: at(id), repeat: 'idempotent' }
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
