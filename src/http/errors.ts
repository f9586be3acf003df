import { STATUS_CODES } from 'node:http'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import type { ErrorBody } from '../../schemas/error.js'
import { redactUrl } from '../config/redact.js'
import { StoreUnavailableError } from '../store/types.js'

/** Seconds a 503 tells the client to wait (Retry-After), unless the refusal set its own. */
export const RETRY_AFTER_UNAVAILABLE = 2

/** An error whose status and message are meant for the client as they are. */
export class HttpError extends Error {
  readonly statusCode: number
  constructor (statusCode: number, message: string) {
    super(message)
    this.name = 'HttpError'
    this.statusCode = statusCode
  }
}

// Fastify's own errors, raised before a route runs, with messages a person can act on.
const FRAMEWORK: Record<string, (request: FastifyRequest) => [number, string]> = {
  // A route that takes other media types than JSON names them in its schema.
  FST_ERR_CTP_INVALID_MEDIA_TYPE: (request) => [415, `Unsupported media type: send the body as ${(request.routeOptions.schema?.consumes ?? ['application/json']).join(' or ')}.`],
  FST_ERR_CTP_BODY_TOO_LARGE: (request) => [413, `The request body is larger than the limit of ${request.routeOptions.bodyLimit} bytes.`],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => [400, 'The Content-Length header does not match the length of the body.'],
  FST_ERR_BAD_URL: () => [400, 'The URL is malformed: check its percent-encoding.'],
  FST_ERR_MAX_PARAM_LENGTH: () => [400, 'A path parameter is longer than the service accepts.']
}

/** The one place where an error becomes an HTTP status and a message. */
export function describeError (error: FastifyError, request: FastifyRequest): ErrorBody {
  const framework = FRAMEWORK[error.code]
  if (framework !== undefined) {
    const [status, message] = framework(request)
    return { error: status, message }
  }
  if (error instanceof HttpError) return { error: error.statusCode, message: error.message }
  if (error instanceof StoreUnavailableError) {
    return { error: 503, message: 'The plant store is unavailable right now; retry in a few seconds.' }
  }
  // Validation errors (Fastify gives them 400) and its other 4xx errors name the field and the rule.
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return { error: error.statusCode, message: error.message }
  }
  return { error: 500, message: `The service failed to handle this request; report request id ${request.id} if it persists.` }
}

export function sendError (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const body = describeError(error, request)
  // Only describeError's fallback is a failure of the service.
  if (body.error === 500) {
    // Details (driver messages, SQL, stacks) go to the log only, next to the request id.
    request.log.error({ err: error }, STATUS_CODES[body.error])
  } else {
    // A deliberate answer: the request's own log line already has its status.
    request.log.debug({ statusCode: body.error, reason: body.message }, 'request rejected')
  }
  // Every 503 says when to come back (a store outage, shutting down, /ready); load shedding sets its own.
  if (body.error === 503 && !reply.hasHeader('retry-after')) reply.header('retry-after', RETRY_AFTER_UNAVAILABLE)
  return reply.code(body.error).send(body)
}

/** Fastify's frameworkErrors handler. */
export function sendFrameworkError (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const body = describeError(error, request)
  reply.header('x-request-id', request.id)
  request.server.corsHeaders?.(request, reply)
  request.log.info({ req: request, res: { statusCode: body.error }, reason: body.message }, 'request rejected')
  return reply.code(body.error).send(body)
}

export function sendNotFound (request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return reply.code(404).send({ error: 404, message: `No route matches ${request.method} ${redactUrl(request.url).slice(0, 200)}.` })
}
