import { hash, timingSafeEqual } from 'node:crypto'
import bearerAuth from '@fastify/bearer-auth'
import type { FastifyError, FastifyPluginCallback, FastifyReply } from 'fastify'
import fp from 'fastify-plugin'
import { HttpError } from '../src/http/errors.js'
import { isScope, SCOPES, type Scope, type ScopedToken } from '../src/shared/scopes.js'

export { SCOPES, type Scope, type ScopedToken } from '../src/shared/scopes.js'

export interface AuthOptions {
  /** The accepted bearer tokens: a string has every scope, a ScopedToken only its own. */
  tokens: ReadonlyArray<string | ScopedToken>
  /** The realm named in the WWW-Authenticate challenge. */
  realm?: string
}

declare module 'fastify' {
  interface FastifyRequest {
    /** SHA-256 of the presented token, hex: names the client without holding its secret. */
    tokenDigest?: string
    /** The first 12 hex digits of tokenDigest: what the logs and the per-token rate limit name the token by. */
    tokenFingerprint?: string
    /** What the presented token may do. */
    tokenScopes?: ReadonlySet<Scope>
  }
}

class InvalidTokenError extends Error {}

// Made once per token, at registration: a request only picks the one its token matches.
interface Grant {
  digest: Buffer
  hex: string
  fingerprint: string
  scopes: ReadonlySet<Scope>
}

// One call, no Hash object: a third less than createHash for the digest every request makes.
function digest (token: string): Buffer {
  return hash('sha256', token, 'buffer')
}

const isToken = (token: unknown): token is string => typeof token === 'string' && token !== ''

function grants (tokens: AuthOptions['tokens'] | undefined): Grant[] | undefined {
  if (!Array.isArray(tokens) || tokens.length === 0) return undefined
  const byDigest = new Map<string, Grant>()
  for (const entry of tokens as unknown[]) {
    const { token, scopes } = typeof entry === 'string' ? { token: entry, scopes: SCOPES } : (entry ?? {}) as Partial<ScopedToken>
    if (!isToken(token) || !Array.isArray(scopes) || scopes.length === 0 || !scopes.every(isScope)) return undefined
    const hash = digest(token)
    const hex = hash.toString('hex')
    const grant = { digest: hash, hex, fingerprint: hex.slice(0, 12), scopes: new Set(scopes) }
    const known = byDigest.get(hex)
    if (known !== undefined && (known.scopes.size !== grant.scopes.size || !scopes.every((s) => known.scopes.has(s)))) return undefined
    byDigest.set(hex, grant)
  }
  return [...byDigest.values()]
}

/** The 403 for a valid token without the scope the route needs. */
function insufficientScope (reply: FastifyReply, realm: string, needed: Scope | undefined): HttpError {
  // Not a failed authentication, so not counted; and as after a 401, the body is not read.
  reply.header('connection', 'close')
  reply.header('www-authenticate', `Bearer realm="${realm}", error="insufficient_scope"${needed === undefined ? '' : `, scope="${needed}"`}`)
  return new HttpError(403, needed === undefined
    ? 'This token may not do this: the operation is open only to tokens with every scope.'
    : `This token may not do this: the operation needs the scope ${needed}, which the token does not have.`)
}

const auth: FastifyPluginCallback<AuthOptions> = (fastify, options, done) => {
  const known = grants(options.tokens)
  if (known === undefined) {
    return done(new Error('auth: options.tokens must be a non-empty array of non-empty strings or { token, scopes } with known scopes, ' +
      'each token with one set of scopes'))
  }
  const realm = options.realm ?? 'plant-store'
  // Declared, so that every request of the scope has one shape, authenticated or not.
  for (const field of ['tokenDigest', 'tokenFingerprint', 'tokenScopes'] as const) fastify.decorateRequest(field, undefined)

  fastify.register(bearerAuth, {
    keys: [],
    addHook: false,
    // rfc6749 makes the scheme word case-insensitive, as RFC 7235 says it is.
    specCompliance: 'rfc6749',
    verifyErrorLogLevel: 'debug',
    auth (key, request) {
      if (key === '') return false
      const presented = digest(key)
      // Comparing digests keeps the time independent of the token's length and content.
      let grant: Grant | undefined
      for (const candidate of known) if (timingSafeEqual(candidate.digest, presented)) grant = candidate
      if (grant === undefined) throw new InvalidTokenError()
      request.tokenDigest = grant.hex
      request.tokenFingerprint = grant.fingerprint
      request.tokenScopes = grant.scopes
      return true
    }
  })

  fastify.after(() => {
    const verify = fastify.verifyBearerAuth as NonNullable<typeof fastify.verifyBearerAuth>
    // Set by the failed-authentication limit when it is registered in this scope.
    const countFailure = fastify.countAuthFailure
    // onRequest: nothing of the body is read or parsed before the caller is known.
    fastify.addHook('onRequest', function authenticate (request, reply, next) {
      verify(request, reply, (error?: Error) => {
        if (error === undefined) {
          const scopes = request.tokenScopes as ReadonlySet<Scope>
          // A token with every scope may do anything: only a narrowed one looks at the route.
          if (scopes.size === SCOPES.length) return next()
          const needed = request.routeOptions.config.scope
          // A route that declares no scope is open only to tokens with every scope.
          if (needed === undefined ? request.is404 : scopes.has(needed)) return next()
          return next(insufficientScope(reply, realm, needed))
        }
        // The body of a refused request is not read.
        reply.header('connection', 'close')
        const unauthorized = (): HttpError => {
          const wrongToken = error instanceof InvalidTokenError
          reply.header('www-authenticate', `Bearer realm="${realm}"${wrongToken ? ', error="invalid_token"' : ''}`)
          return new HttpError(401, wrongToken
            ? 'The bearer token is not valid: send a token the service was configured with.'
            : (error as FastifyError).code === 'FST_BEARER_AUTH_MISSING_AUTHORIZATION_HEADER'
                ? 'Authentication required: send an Authorization: Bearer <token> header.'
                : 'The Authorization header is malformed: send Authorization: Bearer <token>.')
        }
        if (countFailure === undefined) return next(unauthorized())
        countFailure(request, reply).then((limited) => next(limited ?? unauthorized()), next)
      })
    })
  })
  done()
}

export default fp(auth, { name: 'plant-store-auth', fastify: '5.x' })
