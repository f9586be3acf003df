// src/http: the HTTP layer beneath the plugins: errors, validation, JSON bodies, cursors,
// error responses, connections, the request log, server options and the shared limits.

import type { RouteOptions } from 'fastify'
import { ErrorBody, RetryAfterHeader, WwwAuthenticateHeader, ref } from '../../schemas/index.js'
import type { Scope } from '../shared/scopes.js'

const error = (description: string, headers: Record<string, unknown>) => ({ ...ref(ErrorBody), description, headers })

// What the API scope adds to each of its routes, beyond what the route answers itself.
const responses = {
  401: error('No bearer token, a malformed Authorization header, or a token the service does not accept',
    { 'WWW-Authenticate': WwwAuthenticateHeader }),
  // Node's own timeouts (server-options.ts).
  408: { ...ref(ErrorBody), description: 'The request did not arrive in time (HEADERS_TIMEOUT for its headers, REQUEST_TIMEOUT for all of it): the connection is closed' },
  429: error('Too many requests with this token, or too many failed authentications from this address: wait as long as Retry-After says',
    { 'Retry-After': RetryAfterHeader }),
  503: error('The store cannot be reached, or the service is overloaded: retry after the seconds Retry-After gives',
    { 'Retry-After': RetryAfterHeader })
}

const forbidden = (scope: Scope | undefined) => error(scope === undefined
  ? 'The token is valid but does not have every scope, which this operation needs'
  : `The token is valid but does not have the scope \`${scope}\`, which this operation needs; nothing was done`,
{ 'WWW-Authenticate': WwwAuthenticateHeader })

/** An onRoute hook for the API scope: its routes need a bearer token with the route's scope. */
export function describeApiRoute (route: RouteOptions): void {
  const schema = route.schema ?? {}
  const scope = route.config?.scope
  route.schema = {
    ...schema,
    // A route without a scope is open only to tokens with every scope.
    security: [{ bearerAuth: scope === undefined ? [] : [scope] }],
    // The scope's 503 text wins: it covers the route's own (the store) and load shedding.
    response: { ...(schema.response as object), ...responses, 403: forbidden(scope) }
  }
}
