import type { TSchema, TUnsafe } from '@sinclair/typebox'
import { EtagHeader, ErrorBody, Plant, RetryAfterHeader, ref } from '../../schemas/index.js'
import { HttpError } from '../../src/http/errors.js'

// Response schemas name only the statuses these routes answer themselves: a 401
// or 429 comes from the host's hooks (auth, rate limit), in the host's format;
// the host declares them (this service does in src/api-routes.ts).

/** A response schema: a shared schema's `$ref`, with what it means on the route and the headers it carries. */
export type Described<T> = TUnsafe<T> & { description: string, headers?: Record<string, TSchema> }

/** An Error response, with what it means on this route (the OpenAPI document shows it). */
export function error (description: string, headers?: Record<string, TSchema>): Described<ErrorBody> {
  return headers === undefined ? { ...ref(ErrorBody), description } : { ...ref(ErrorBody), description, headers }
}

/** A response that carries one plant, with its ETag. */
export function plantResponse (description: string): Described<Plant> {
  return { ...ref(Plant), description, headers: { ETag: EtagHeader } }
}

export const tags = ['plants']
export const unavailable = error('The store cannot be reached: retry after the seconds Retry-After gives', { 'Retry-After': RetryAfterHeader })
export const badId = error('The id is not a signed 64-bit integer in plain decimal digits')

export const noPlant = (id: bigint): HttpError => new HttpError(404, `No plant has id ${id}.`)
