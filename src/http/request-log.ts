import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'
import pino from 'pino'
import { redactUrl } from '../config/redact.js'

const { chindingsSym, streamSym, timeSym } = pino.symbols

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

/** One log line per request, written when the answer is sent. */
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
      // pino's exported symbols hold the bindings.
      const log = reply.log as unknown as Record<symbol, unknown>
      const stream = log[streamSym] as { write (line: string): void }
      stream.write(`{"level":30${(log[timeSym] as () => string)()}${log[chindingsSym] as string},"req":${JSON.stringify(serializeRequest(request))},` +
        `"res":{"statusCode":${reply.statusCode}},"responseTime":${reply.elapsedTime},"msg":"request completed"}\n`)
    }
  }
}
