import type { Plant } from '../../schemas/plant.js'
import { plantEtag } from './etag.js'
import type { EventFeed } from './feed-types.js'
import type { WebhookStore } from './webhook-types.js'

/** How a caller may give up on a write: checked before its batch is sent. */
export interface WriteOptions {
  /** True once nobody waits for the outcome (the client has gone). */
  abandoned?: () => boolean
  /** Who asked for the write (an HTTP request): the store's observer hears of it with the write's batch. */
  origin?: object
}

/** A plant as the store keeps it: the response shape plus its 64-bit id. */
export interface PlantRecord extends Plant {
  id: bigint
}

/** created: committed now; replayed: already committed (an idempotent retry); conflict: another plant holds the id. */
export type CreateOutcome = 'created' | 'replayed' | 'conflict'

export interface CreateResult {
  outcome: CreateOutcome
  /** The plant as stored under that id. */
  plant: Plant
}

/** A change of a plant, as a merge patch gives it: `tag: null` removes the tag, a field left out stays. */
export interface PlantChange {
  name?: string
  tag?: string | null
}

/** A change or a delete, made only to the plant as the caller last saw it when `ifMatch` is given. */
export interface ChangeOptions extends WriteOptions {
  /** Entity tags (plantEtag): the write is made only when the plant's current one is among them. */
  ifMatch?: readonly string[]
  /** Entity tags (plantEtag): the write is refused when the plant's current one is among them. */
  ifNoneMatch?: readonly string[]
}

/** updated: committed now; unchanged: already so; refused: its ETag is among `ifNoneMatch`. */
export interface UpdateResult {
  outcome: 'updated' | 'unchanged' | 'refused'
  /** The plant as it now is. */
  plant: Plant
}

/** One page of plants in ascending (signed) id order. */
export interface ListQuery {
  /** The most plants to return. */
  limit: number
  /** Only plants whose tag is exactly this. */
  tag?: string
  /** Only plants with an id greater than this (the last id of the previous page). */
  after?: bigint
}

/** The port the routes use; one adapter per database engine implements it. */
export interface PlantStore {
  /** Webhook subscriptions and the outbox that creates fill in their own transactions. */
  readonly webhooks: WebhookStore
  /** The change feed: the outbox's events in commit order; absent when the feed is off. */
  readonly events?: EventFeed
  /** A secret of 32 random bytes kept in the database, made once and read by every instance that opens it. */
  readonly cursorKey: Buffer
  /** Resolves only once the outcome is committed. */
  create (plant: PlantRecord, options?: WriteOptions): Promise<CreateResult>
  /** The plant as it is once the change is committed. */
  update (id: bigint, change: PlantChange, options?: ChangeOptions): Promise<UpdateResult | undefined>
  /** True when the plant existed (with an ETag among `ifMatch`, when given) and its removal is committed. */
  delete (id: bigint, options?: ChangeOptions): Promise<boolean | 'refused'>
  get (id: bigint): Promise<Plant | undefined>
  /** Served by an index from `after` on: a page costs the same at any depth. */
  list (query: ListQuery): Promise<PlantRecord[]>
  /** Rejects with StoreUnavailableError when the store does not answer or cannot be written. */
  check (): Promise<void>
  close (): Promise<void>
}

/** A write, as the adapters queue it: creates, updates and deletes share one group-commit queue. */
export type Write =
  | { op: 'create', plant: PlantRecord }
  | { op: 'update', id: bigint, change: PlantChange, ifMatch?: readonly string[], ifNoneMatch?: readonly string[] }
  | { op: 'delete', id: bigint, ifMatch?: readonly string[], ifNoneMatch?: readonly string[] }
export type WriteResult = CreateResult | UpdateResult | boolean | 'refused' | undefined

/** The store cannot be reached or cannot answer now; retrying later may succeed. */
export class StoreUnavailableError extends Error {
  constructor (reason: string, options?: ErrorOptions) {
    super(`store unavailable: ${reason}`, options)
    this.name = 'StoreUnavailableError'
  }
}

/** Two plants are the same when name and tag match (an absent tag equals only an absent tag). */
export function samePlant (a: Plant, b: Plant): boolean {
  return a.name === b.name && a.tag === b.tag
}

/** The plant once `change` is applied to it. */
export function applyChange (plant: Plant, { name = plant.name, tag }: PlantChange): Plant {
  return toPlant(name, tag === undefined ? plant.tag : tag)
}

/** Whether a write conditioned on `ifMatch` may change `plant` (no condition: it may). */
export function matches (plant: Plant, ifMatch: readonly string[] | undefined): boolean {
  return ifMatch === undefined || ifMatch.includes(plantEtag(plant))
}

/** Whether `ifNoneMatch` names the plant's ETag, refusing a write (no condition: it does not). */
export function refuses (plant: Plant, ifNoneMatch: readonly string[] | undefined): boolean {
  return ifNoneMatch !== undefined && ifNoneMatch.includes(plantEtag(plant))
}

export function toPlant (name: string, tag: string | null | undefined): Plant {
  return tag == null ? { name } : { name, tag }
}

export function toRecord (id: bigint, name: string, tag: string | null | undefined): PlantRecord {
  return tag == null ? { id, name } : { id, name, tag }
}
