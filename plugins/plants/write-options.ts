import type { FastifyRequest } from 'fastify'
import type { WriteOptions } from '../../src/store/types.js'

/**
 * A write of a request whose client has gone (its connection closed) is dropped before it is sent to the store;
 * the request is the write's origin, so that a trace can link the store's batch to the requests it carried.
 */
export function writeOf (request: FastifyRequest): WriteOptions {
  return { abandoned: () => request.raw.socket?.destroyed === true, origin: request }
}
