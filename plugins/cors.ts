import fastifyCors, { type FastifyCorsOptions } from '@fastify/cors'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'

declare module 'fastify' {
  interface FastifyInstance {
    /** Set while CORS is on: adds the headers of an answer that no hook sees (errors.ts's frameworkErrors). */
    corsHeaders?: (request: FastifyRequest, reply: FastifyReply) => void
  }
}

export interface CorsOptions {
  /** Origins whose pages may call the API (`https://app.example.com`), or `['*']` for any; none: CORS stays off. */
  origins: readonly string[]
}

const METHODS = ['GET', 'POST', 'DELETE', 'PATCH']
// The token, the body's type, and the preconditions of a change or a read (ETags).
const REQUEST_HEADERS = ['Authorization', 'Content-Type', 'If-Match', 'If-None-Match']
// What a page's script may read of an answer.
const EXPOSED_HEADERS = ['ETag', 'Link', 'Retry-After', 'WWW-Authenticate']

/** Lets pages of the configured origins call the API from a browser. */
const cors: FastifyPluginAsync<CorsOptions> = async (fastify, { origins }) => {
  if (!Array.isArray(origins) || !origins.every((origin) => typeof origin === 'string' && origin !== '')) {
    throw new TypeError('cors: options.origins must be an array of origins such as https://app.example.com, or [\'*\']')
  }
  if (origins.length === 0) return
  const any = origins.includes('*')
  const allowed = new Set(origins)

  const forRequest = (request: FastifyRequest): FastifyCorsOptions => {
    const origin = request.headers.origin
    if (origin === undefined || !(any || allowed.has(origin))) return { origin: false }
    return {
      origin: any ? '*' : origin,
      methods: METHODS,
      allowedHeaders: REQUEST_HEADERS,
      exposedHeaders: EXPOSED_HEADERS,
      // Only a real preflight (it names the method to come) is answered here.
      preflight: request.headers['access-control-request-method'] !== undefined,
      strictPreflight: false
    }
  }
  await fastify.register(fastifyCors, { hook: 'onRequest', delegator: (request, done) => done(null, forRequest(request)) })

  // A malformed URL or an overlong path parameter is answered before routing, with no hook.
  fastify.decorate('corsHeaders', (request: FastifyRequest, reply: FastifyReply) => {
    const { origin } = forRequest(request)
    reply.header('vary', 'Origin')
    if (origin !== false) reply.header('access-control-allow-origin', origin).header('access-control-expose-headers', EXPOSED_HEADERS.join(', '))
  })
}

export default fp(cors, { name: 'plant-store-cors', fastify: '5.x' })
