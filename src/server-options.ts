import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyServerOptions } from 'fastify'
import type { Config } from './config.js'
import { sendError } from './errors.js'

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

/** The Fastify server options, shared by the server process and the tests. */
export function serverOptions (config: Pick<Config, 'bodyLimit' | 'logLevel'>): FastifyServerOptions {
  return {
    logger: { level: config.logLevel },
    bodyLimit: config.bodyLimit,
    ajv: { customOptions: { coerceTypes: false } },
    frameworkErrors: sendError,
    clientErrorHandler
  }
}
