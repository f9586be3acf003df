import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'
import { redactUrl } from '../config/redact.js'

/**
 * Fastify's own request serializer, but a token in the query string is not logged; the
 * token that authenticated the request is named by its fingerprint, never itself.
 */
export function serializeRequest (request: FastifyRequest) {
  return {
    method: request.method,
    url: redactUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
    token: request.tokenFingerprint
  }
}

/**
 * One log line per request, written when the answer is sent: method, URL,
 * status, time and request id together (Fastify's default writes two). The
 * request serializer keeps no header, so the Authorization header never reaches
 * the log. Routes with `logLevel: 'warn'` (the probes) write no line at all.
 */
export class RequestLog extends LogController {
  override incomingRequest (): void {}

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) {
      reply.log.error({ req: request, res: reply, responseTime: reply.elapsedTime, err: error }, 'request errored')
    } else {
      reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed')
    }
  }
}
