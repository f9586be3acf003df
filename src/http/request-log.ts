import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'
import pino from 'pino'
import { redactUrl } from '../config/redact.js'

const { chindingsSym, streamSym, timeSym } = pino.symbols

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
 *
 * Through pino's API, so that a logger's redaction, formatters and serializers apply; with
 * `direct`, for a logger known to have none but `serializeRequest` (the service's own, see
 * server-options.ts), the success line is made as one string instead: the same line, without
 * pino's walk over the objects and their serializers, which every request would pay.
 */
export class RequestLog extends LogController {
  constructor (private readonly direct = false) {
    super()
  }

  override incomingRequest (): void {}

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) {
      reply.log.error({ req: request, res: reply, responseTime: reply.elapsedTime, err: error }, 'request errored')
    } else if (!this.direct) {
      reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed')
    } else if ((reply.log as pino.Logger).isLevelEnabled('info')) {
      // pino's exported symbols hold the bindings (pid, hostname, request id) as JSON already, the time function and the stream.
      const log = reply.log as unknown as Record<symbol, unknown>
      const stream = log[streamSym] as { write (line: string): void }
      stream.write(`{"level":30${(log[timeSym] as () => string)()}${log[chindingsSym] as string},"req":${JSON.stringify(serializeRequest(request))},` +
        `"res":{"statusCode":${reply.statusCode}},"responseTime":${reply.elapsedTime},"msg":"request completed"}\n`)
    }
  }
}
