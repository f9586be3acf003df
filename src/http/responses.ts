import type { TSchema, TUnsafe } from '@sinclair/typebox'
import { ErrorBody, RetryAfterHeader, ref } from '../../schemas/index.js'

// Response schemas name only the statuses these routes answer themselves.

/** A response schema: a shared schema's `$ref`, with what it means on the route and the headers it carries. */
export type Described<T> = TUnsafe<T> & { description: string, headers?: Record<string, TSchema> }

/** An Error response, with what it means on this route (the OpenAPI document shows it). */
export function error (description: string, headers?: Record<string, TSchema>): Described<ErrorBody> {
  return headers === undefined ? { ...ref(ErrorBody), description } : { ...ref(ErrorBody), description, headers }
}

export const unavailable = error('The store cannot be reached: retry after the seconds Retry-After gives', { 'Retry-After': RetryAfterHeader })
