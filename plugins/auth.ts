import { createHash, timingSafeEqual } from 'node:crypto'
import bearerAuth from '@fastify/bearer-auth'
import type { FastifyError, FastifyPluginCallback } from 'fastify'
import fp from 'fastify-plugin'
import { HttpError } from '../src/errors.js'

export interface AuthOptions {
  /** The accepted bearer tokens. Only their SHA-256 digests are kept. */
  tokens: readonly string[]
  /** The realm named in the WWW-Authenticate challenge. */
  realm?: string
}

declare module 'fastify' {
  interface FastifyRequest {
    /** SHA-256 of the presented token, hex: names the client without holding its secret. */
    tokenDigest?: string
  }
}

class InvalidTokenError extends Error {}

function digest (token: string): Buffer {
  return createHash('sha256').update(token).digest()
}

const auth: FastifyPluginCallback<AuthOptions> = (fastify, options, done) => {
  if (!Array.isArray(options.tokens) || options.tokens.length === 0 || !options.tokens.every((t) => typeof t === 'string' && t !== '')) {
    return done(new Error('auth: options.tokens must be a non-empty array of non-empty strings'))
  }
  const digests = options.tokens.map(digest)
  const realm = options.realm ?? 'plant-store'

  fastify.register(bearerAuth, {
    keys: [],
    addHook: false,
    // rfc6749 makes the scheme word case-insensitive, as RFC 7235 says it is.
    specCompliance: 'rfc6749',
    verifyErrorLogLevel: 'debug',
    auth (key, request) {
      if (key === '') return false
      const presented = digest(key)
      // Comparing digests keeps the time independent of the token's length and
      // content; every configured token is compared, with no early exit.
      let found = false
      for (const known of digests) found = timingSafeEqual(known, presented) || found
      if (!found) throw new InvalidTokenError()
      request.tokenDigest = presented.toString('hex')
      return true
    }
  })

  fastify.after(() => {
    const verify = fastify.verifyBearerAuth as NonNullable<typeof fastify.verifyBearerAuth>
    // Set by the failed-authentication limit when it is registered in this scope.
    const countFailure = fastify.countAuthFailure
    // onRequest: nothing of the body is read or parsed before the caller is known.
    fastify.addHook('onRequest', (request, reply, next) => {
      verify(request, reply, (error?: Error) => {
        if (error === undefined) return next()
        // The body of a refused request is not read: closing ends it, where keep-alive would
        // read (and discard) all of it first, however large, for a client with no token.
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
