import { Type } from '@sinclair/typebox'

// Response headers the API document declares beside a status (a route schema's
// `headers`): clients, and browsers through CORS, read them.

export const LinkHeader = Type.String({
  // The longest tag, percent-encoded, and the longest cursor, with room for a mount prefix.
  maxLength: 8192,
  pattern: '^<[^>]*>; rel="next"$',
  description: 'Present while more plants follow: `<…>; rel="next"` (RFC 8288), a reference to the next page relative to this one'
})

export const RetryAfterHeader = Type.Integer({
  format: 'int32',
  minimum: 0,
  // The longest window a limit counts over (RATE_LIMIT_WINDOW, AUTH_FAILURE_WINDOW), in seconds.
  maximum: 86400,
  description: 'Seconds to wait before retrying (RFC 9110)'
})

export const WwwAuthenticateHeader = Type.String({
  maxLength: 256,
  pattern: '^Bearer realm="plant-store"',
  description: 'The challenge (RFC 6750): `Bearer realm="plant-store"`, with `error="invalid_token"` when the token was presented and is wrong, ' +
    'or `error="insufficient_scope", scope="<the scope>"` when the token is valid but lacks the operation\'s scope (403)'
})
