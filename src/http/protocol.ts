import type { FastifyInstance } from 'fastify'
import { HttpError } from './errors.js'

// The test Node applies before it sends a 100 Continue on its own.
const CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i

/** The answers Node and Fastify would write themselves, with an empty or a foreign body. */
export function answerProtocol (app: FastifyInstance): void {
  let closing = false
  app.addHook('preClose', (done) => {
    closing = true
    done()
  })

  // With a listener Node neither answers 417 nor sends 100 Continue itself.
  app.server.on('checkContinue', app.routing)
  app.server.on('checkExpectation', app.routing)

  app.addHook('onRequest', (request, reply, done) => {
    const http11 = request.raw.httpVersion === '1.1'
    const expect = request.headers.expect
    let error: HttpError | undefined
    if (closing) {
      error = new HttpError(503, 'The service is shutting down; retry in a few seconds.')
    } else if (http11 && request.headers.host === undefined) {
      error = new HttpError(400, 'The Host header is missing: HTTP/1.1 requires one.')
    } else if (http11 && expect !== undefined && !CONTINUE.test(expect)) {
      error = new HttpError(417, 'The Expect header is not supported: only 100-continue is.')
    }
    if (error !== undefined) reply.header('connection', 'close')
    done(error)
  })

  // preParsing runs after every onRequest hook (authentication included), just before the body is read.
  app.addHook('preParsing', (request, reply, payload, done) => {
    if (request.raw.httpVersion === '1.1' && CONTINUE.test(request.headers.expect ?? '')) reply.raw.writeContinue()
    done(null, payload)
  })
}
