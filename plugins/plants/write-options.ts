import type { FastifyRequest } from 'fastify'
import type { WriteOptions } from '../../src/store/types.js'

/**
 * A write of a request whose client has gone (its connection closed) is dropped before it is sent to the
 * store.
 */
export function writeOf (request: FastifyRequest): WriteOptions {
  return { abandoned: () => request.raw.socket?.destroyed === true, origin: request }
}
