import { STATUS_CODES, type Server, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyHttpOptions } from 'fastify'
import { MAX_ID_LENGTH } from '../../schemas/webhooks.js'
import type { Config } from '../config/index.js'
import { sendFrameworkError } from './errors.js'
import { requestId } from './request-id.js'
import { RequestLog, serializeRequest } from './request-log.js'

// The response Node is writing on a connection, if any.
type HttpSocket = Socket & { _httpMessage?: ServerResponse | null }

// Connections whose parse error is being answered: the parser reports each later chunk too.
const answering = new WeakSet<Socket>()

// Errors Node's HTTP parser meets before Fastify sees a request (a bad Content-Length, a broken request line).
function clientErrorHandler (error: NodeJS.ErrnoException, socket: HttpSocket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed || answering.has(socket)) return
  const [status, message] = error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
    ? [408, 'The request took too long to arrive.']
    : error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'The request headers are larger than the service accepts.']
      : [400, 'The request is not valid HTTP/1.1.']
  const body = JSON.stringify({ error: status, message })
  answering.add(socket)
  socket.pause()
  const answer = (): void => {
    // Node moves the connection on to the next pipelined response as one finishes.
    const pending = socket._httpMessage
    if (pending != null && pending.req.complete && !pending.writableFinished && !socket.destroyed) {
      pending.once('close', () => setImmediate(answer))
      return
    }
    // A response already under way to an incomplete request cannot be followed by another.
    if (socket.writable && pending?.headersSent !== true) {
      socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
    }
    socket.destroy(error)
  }
  answer()
}

/** Where log lines go: each call writes one JSON line (a pino destination). */
export interface LogStream {
  write (line: string): void
}

export type ServerConfig = Pick<Config, 'bodyLimit' | 'logLevel' | 'requestTimeout' | 'headersTimeout' | 'keepAliveTimeout' | 'trustProxy'>

/** The Fastify server options, shared by the server process and the tests. */
export function serverOptions (config: ServerConfig, logStream?: LogStream): FastifyHttpOptions<Server> {
  return {
    logger: { level: config.logLevel, stream: logStream, serializers: { req: serializeRequest } },
    logController: new RequestLog(),
    genReqId: requestId,
    // Behind a proxy (deploy/haproxy), the client's address is in X-Forwarded-For: request.ip.
    trustProxy: config.trustProxy,
    bodyLimit: config.bodyLimit,
    // The router refuses a longer path parameter before any schema sees it.
    routerOptions: { maxParamLength: MAX_ID_LENGTH * 12 },
    ajv: { customOptions: { coerceTypes: false } },
    frameworkErrors: sendFrameworkError,
    // Answered in protocol.ts with the Error body, rather than by Fastify and Node with theirs.
    return503OnClosing: false,
    clientErrorHandler,
    // A client that sends its request slowly, or idles, cannot hold a connection.
    requestTimeout: config.requestTimeout,
    keepAliveTimeout: config.keepAliveTimeout,
    http: { headersTimeout: config.headersTimeout, requestTimeout: config.requestTimeout, connectionsCheckingInterval: 1000, requireHostHeader: false }
  }
}
