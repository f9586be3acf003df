import type { TUnsafe } from '@sinclair/typebox'
import { ErrorBody, Plant, ref } from '../../schemas/index.js'

// Response schemas name only the statuses these routes answer themselves: a 401
// or 429 comes from the host's hooks (auth, rate limit), in the host's format;
// the host declares them (this service does in src/api-routes.ts).

/** An Error response, with what it means on this route (the OpenAPI document shows it). */
/** A response schema: a shared schema's `$ref`, with what it means on the route. */
export type Described<T> = TUnsafe<T> & { description: string }

export function error (description: string): Described<ErrorBody> {
  return { ...ref(ErrorBody), description }
}

export function plantResponse (description: string): Described<Plant> {
  return { ...ref(Plant), description }
}

export const tags = ['plants']
export const unavailable = error('The store cannot be reached: retry shortly')
export const badId = error('The id is not a signed 64-bit integer in plain decimal digits')
