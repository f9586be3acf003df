import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'
import { redactUrl } from '../config/redact.js'

/** Fastify's own request serializer, but a token in the query string is not logged. */
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

/** One log line per request, written when the answer is sent, through the request's pino logger. */
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
