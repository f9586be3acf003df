import type { RouteOptions } from 'fastify'
import { ErrorBody, RetryAfterHeader, WwwAuthenticateHeader, ref } from '../schemas/index.js'

const error = (description: string, headers: Record<string, unknown>) => ({ ...ref(ErrorBody), description, headers })

// What the API scope adds to each of its routes, beyond what the route answers itself.
const responses = {
  401: error('No bearer token, a malformed Authorization header, or a token the service does not accept',
    { 'WWW-Authenticate': WwwAuthenticateHeader }),
  429: error('Too many requests with this token, or too many failed authentications from this address: wait as long as Retry-After says',
    { 'Retry-After': RetryAfterHeader }),
  503: error('The store cannot be reached, or the service is overloaded: retry after the seconds Retry-After gives',
    { 'Retry-After': RetryAfterHeader })
}

/**
 * An onRoute hook for the API scope: its routes need a bearer token and are
 * rate limited and shed under load, so their schemas (and the OpenAPI document)
 * name the bearerAuth scheme and the 401, 429 and 503 that the scope answers.
 * The plants plugin leaves these out, as a host with other auth answers them its own way.
 */
export function describeApiRoute (route: RouteOptions): void {
  const schema = route.schema ?? {}
  route.schema = {
    ...schema,
    security: [{ bearerAuth: [] }],
    // The scope's 503 text wins: it covers the route's own (the store) and load shedding.
    response: { ...(schema.response as object), ...responses }
  }
}
