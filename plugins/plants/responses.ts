import { EtagHeader, Plant, ref } from '../../schemas/index.js'
import { HttpError } from '../../src/http/errors.js'
import { error, type Described } from '../../src/http/responses.js'

export { error, unavailable, type Described } from '../../src/http/responses.js'

/** A response that carries one plant, with its ETag. */
export function plantResponse (description: string): Described<Plant> {
  return { ...ref(Plant), description, headers: { ETag: EtagHeader } }
}

export const tags = ['plants']
export const badId = error('The id is not a signed 64-bit integer in plain decimal digits')

export const noPlant = (id: bigint): HttpError => new HttpError(404, `No plant has id ${id}.`)
