import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'

// An id a caller chose is kept when it is short plain text.
const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** Fastify's genReqId: the caller's `x-request-id` when sane, a fresh UUID otherwise. */
export function requestId (request: IncomingMessage): string {
  const incoming = request.headers['x-request-id']
  return typeof incoming === 'string' && SANE_ID.test(incoming) ? incoming : randomUUID()
}

/** An onRequest hook: every answer names its request, so a client can quote it. */
export function echoRequestId (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  reply.header('x-request-id', request.id)
  done()
}
