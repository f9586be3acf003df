import type { Plant } from '../../schemas/plant.js'

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

/** The port the routes use; one adapter per database engine implements it. */
export interface PlantStore {
  /** Resolves only once the outcome is committed. */
  create (plant: PlantRecord): Promise<CreateResult>
  get (id: bigint): Promise<Plant | undefined>
  /** Rejects with StoreUnavailableError when the store does not answer. */
  check (): Promise<void>
  close (): Promise<void>
}

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
