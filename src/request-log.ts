import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'

/**
 * One log line per request, written when the answer is sent: method, URL,
 * status, time and request id together (Fastify's default writes two). The
 * request serializer keeps no header, so the Authorization header never reaches
 * the log. Routes with `logLevel: 'warn'` (the probes) write no line at all.
 */
export class RequestLog extends LogController {
  override incomingRequest (): void {}

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = { req: request, res: reply, responseTime: reply.elapsedTime }
    if (error) {
      reply.log.error({ ...line, err: error }, 'request errored')
    } else {
      reply.log.info(line, 'request completed')
    }
  }
}
