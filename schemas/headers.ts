import { Type } from '@sinclair/typebox'

// Response headers the API document declares beside a status (a route schema's
// `headers`): clients, and browsers through CORS, read them.

export const LinkHeader = Type.String({
  description: 'Present while more plants follow: `<…>; rel="next"` (RFC 8288), a reference to the next page relative to this one'
})

export const RetryAfterHeader = Type.Integer({
  minimum: 0,
  description: 'Seconds to wait before retrying (RFC 9110)'
})

export const WwwAuthenticateHeader = Type.String({
  description: 'The challenge (RFC 6750): `Bearer realm="plant-store"`, with `error="invalid_token"` when the token was presented and is wrong, ' +
    'or `error="insufficient_scope", scope="<the scope>"` when the token is valid but lacks the operation\'s scope (403)'
})
