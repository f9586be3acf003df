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

export const EtagHeader = Type.String({
  maxLength: 45,
  description: 'A strong validator of the plant (RFC 9110 §8.8.3): the same exactly when its name and tag are. ' +
    'Give it in If-Match to change or delete the plant only as it was read, or in If-None-Match to read it only when it has changed',
  examples: ['"nfwLjKlBkjGmssHcEHJQ_3KjqgSDeFfJVdNNCCm3BOA"']
})

/** The longest If-Match or If-None-Match accepted (a 400 beyond): reading one costs time linear in its length. */
export const MAX_PRECONDITION_LENGTH = 4096

const IfMatch = Type.String({
  maxLength: MAX_PRECONDITION_LENGTH,
  description: 'Proceed only if the plant\'s current ETag is one of these (a comma-separated list of strong ETags), or, with `*`, only if it exists; ' +
    'otherwise 412 and nothing changes. Weak ETags (W/"…") never match',
  examples: ['"nfwLjKlBkjGmssHcEHJQ_3KjqgSDeFfJVdNNCCm3BOA"']
})

const IfNoneMatch = Type.String({
  maxLength: MAX_PRECONDITION_LENGTH,
  description: 'Proceed only if the plant\'s current ETag is none of these (a comma-separated list; W/ is ignored), or, with `*`, only if there is no plant. ' +
    'Otherwise a read answers 304 with no body (the copy the client holds is current), and a change or delete 412 with nothing changed',
  examples: ['"nfwLjKlBkjGmssHcEHJQ_3KjqgSDeFfJVdNNCCm3BOA"']
})

/** The request header of a change made only to the plant as the client last read it. */
export const IfMatchHeaders = Type.Object({ 'If-Match': Type.Optional(IfMatch) })

/** The request header of a read that needs no body when the client's copy is current. */
export const IfNoneMatchHeaders = Type.Object({ 'If-None-Match': Type.Optional(IfNoneMatch) })

/** Both preconditions: every method of a plant evaluates both (RFC 9110 §13.2.2). */
export const ConditionalHeaders = Type.Object({ 'If-Match': Type.Optional(IfMatch), 'If-None-Match': Type.Optional(IfNoneMatch) })
