import type { FastifyInstance } from 'fastify'

/** How often, at most, dropped connections are reported in the log, in ms. */
const REPORT_EVERY = 10_000

/**
 * Caps the open connections (Node closes any beyond `maxConnections` as soon
 * as it is accepted), so that descriptors remain for the store and the log, and
 * keeps a descriptor table that is full anyway from ending the process: the
 * connections that cannot be accepted are refused, and service resumes as
 * others close. Drops are reported at most every ten seconds, not one line each.
 */
export function guardConnections (app: FastifyInstance, maxConnections: number): void {
  app.server.maxConnections = maxConnections

  let dropped = 0
  let reported = 0
  app.server.on('drop', () => {
    dropped++
    if (Date.now() - reported < REPORT_EVERY) return
    app.log.warn({ dropped, maxConnections }, 'connections refused: MAX_CONNECTIONS are open')
    reported = Date.now()
    dropped = 0
  })

  // An 'error' event without a listener is thrown. Errors of listen() reach Fastify's own listener.
  app.server.on('error', (error: NodeJS.ErrnoException) => {
    /* c8 ignore next 2 -- libuv turns EMFILE at accept into this event only when its reserve descriptor is gone too */
    if (error.syscall === 'accept') app.log.error({ err: error }, 'a connection could not be accepted')
  })
}
