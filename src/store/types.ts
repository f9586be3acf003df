import type { Plant } from '../../schemas/plant.js'
import type { WebhookStore } from './webhook-types.js'

/** How a caller may give up on a write: checked before its batch is sent. */
export interface WriteOptions {
  /** True once nobody waits for the outcome (the client has gone): the write is then dropped unless already sent. */
  abandoned?: () => boolean
  /** Who asked for the write (an HTTP request): the store's observer hears of it with the write's batch. */
  origin?: object
}

/** A plant as the store keeps it: the response shape plus its 64-bit id. */
export interface PlantRecord extends Plant {
  id: bigint
}

/**
 * - created: the plant is committed now;
 * - replayed: the same plant was already committed (an idempotent retry);
 * - conflict: a different plant holds that id, and stays as it was.
 */
export type CreateOutcome = 'created' | 'replayed' | 'conflict'

export interface CreateResult {
  outcome: CreateOutcome
  /** The plant as stored under that id. */
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
  /** Resolves only once the outcome is committed. Rejects with StoreUnavailableError when the store's timeout passes first. */
  create (plant: PlantRecord, options?: WriteOptions): Promise<CreateResult>
  /** True when the plant existed and its removal is committed; false when there was none. */
  delete (id: bigint, options?: WriteOptions): Promise<boolean>
  get (id: bigint): Promise<Plant | undefined>
  /** Served by an index from `after` on: a page costs the same at any depth. */
  list (query: ListQuery): Promise<PlantRecord[]>
  /** Rejects with StoreUnavailableError when the store does not answer or cannot be written. */
  check (): Promise<void>
  close (): Promise<void>
}

/**
 * A write, as the adapters queue it: creates and deletes share one group-commit
 * queue, so writes of one id are committed in the order they arrived.
 */
export type Write = { op: 'create', plant: PlantRecord } | { op: 'delete', id: bigint }
export type WriteResult = CreateResult | boolean

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

export function toPlant (name: string, tag: string | null | undefined): Plant {
  return tag == null ? { name } : { name, tag }
}

export function toRecord (id: bigint, name: string, tag: string | null | undefined): PlantRecord {
  return tag == null ? { id, name } : { id, name, tag }
}
