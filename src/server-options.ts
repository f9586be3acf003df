import { STATUS_CODES, type Server } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyHttpOptions, FastifyRequest } from 'fastify'
import type { Config } from './config.js'
import { sendFrameworkError } from './errors.js'
import { databaseSecrets, redactSecrets, redactUrl } from './redact.js'
import { requestId } from './request-id.js'
import { RequestLog } from './request-log.js'

// Errors Node's HTTP parser meets before Fastify sees a request (a bad
// Content-Length, a broken request line): answered with the Error body too.
function clientErrorHandler (error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const [status, message] = error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
    ? [408, 'The request took too long to arrive.']
    : error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'The request headers are larger than the service accepts.']
      : [400, 'The request is not valid HTTP/1.1.']
  const body = JSON.stringify({ error: status, message })
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
  }
  socket.destroy(error)
}

/** Where log lines go: each call writes one JSON line (a pino destination). */
export interface LogStream {
  write (line: string): void
}

export type ServerConfig = Pick<Config, 'bodyLimit' | 'logLevel' | 'requestTimeout' | 'headersTimeout' | 'keepAliveTimeout' | 'tokens' | 'databaseUrl' | 'trustProxy'>

// Fastify's own request serializer, but a token in the query string is not logged.
function serializeRequest (request: FastifyRequest) {
  return {
    method: request.method,
    url: redactUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort
  }
}

/**
 * The Fastify server options, shared by the server process and the tests.
 * `logStream` is where the JSON log lines go: standard output when absent.
 */
export function serverOptions (config: ServerConfig, logStream?: LogStream): FastifyHttpOptions<Server> {
  const secrets = [...config.tokens, ...databaseSecrets(config.databaseUrl)]
  return {
    logger: {
      level: config.logLevel,
      stream: logStream,
      serializers: { req: serializeRequest },
      // The last guard: a configured secret that some message quoted never reaches the log.
      hooks: { streamWrite: (line) => redactSecrets(line, secrets) }
    },
    logController: new RequestLog(),
    genReqId: requestId,
    // Behind a proxy (deploy/haproxy), the client's address is in X-Forwarded-For: request.ip.
    trustProxy: config.trustProxy,
    bodyLimit: config.bodyLimit,
    ajv: { customOptions: { coerceTypes: false } },
    frameworkErrors: sendFrameworkError,
    // Answered in protocol.ts with the Error body, rather than by Fastify and Node with theirs.
    return503OnClosing: false,
    clientErrorHandler,
    // A client that sends its request slowly, or idles, cannot hold a connection:
    // Node checks the timeouts of every open connection each second.
    requestTimeout: config.requestTimeout,
    keepAliveTimeout: config.keepAliveTimeout,
    http: { headersTimeout: config.headersTimeout, requestTimeout: config.requestTimeout, connectionsCheckingInterval: 1000, requireHostHeader: false }
  }
}
