import { monitorEventLoopDelay } from 'node:perf_hooks'
import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { HttpError } from '../src/http/errors.js'

export interface LoadSheddingOptions {
  /** Event loop delay, in ms, above which requests are refused; 0 turns shedding off. */
  maxEventLoopDelay: number
  /** Called for each request refused with a 503 (metrics). */
  onRefuse?: () => void
}

/** Seconds a shed client is told to wait (the Retry-After header). */
export const RETRY_AFTER = 10

// The histogram's sampling period, in ms: part of every measured delay, so subtracted.
const RESOLUTION = 10

class Overloaded extends HttpError {
  constructor () {
    super(503, `The service is overloaded right now; retry in ${RETRY_AFTER} seconds.`)
  }
}

/**
 * Refuses the requests of the scope it is registered in with a 503 and Retry-After while the event loop is
 * saturated, rather than queuing them without bound and answering every one too late.
 */
const loadShedding: FastifyPluginAsync<LoadSheddingOptions> = async (fastify, { maxEventLoopDelay, onRefuse }) => {
  if (maxEventLoopDelay === 0) return
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION })
  histogram.enable()
  let delay = 0
  const sampler = setInterval(() => {
    // NaN when the period held no sample: compared below so that it sheds nothing.
    delay = Math.max(0, histogram.mean / 1e6 - RESOLUTION)
    histogram.reset()
  }, 1000)
  sampler.unref()
  fastify.addHook('onClose', async () => {
    clearInterval(sampler)
    histogram.disable()
  })

  // When the loop's current turn took up its first request; the turn ends at its check phase.
  let turnStarted: number | undefined
  const endTurn = (): void => { turnStarted = undefined }

  fastify.addHook('onRequest', (_request, reply, done) => {
    const now = performance.now()
    if (turnStarted === undefined) {
      turnStarted = now
      setImmediate(endTurn)
    }
    if (!(delay > maxEventLoopDelay) && now - turnStarted <= maxEventLoopDelay) return done()
    onRefuse?.()
    reply.header('retry-after', RETRY_AFTER)
    done(new Overloaded())
  })
}

export default fp(loadShedding, { name: 'plant-store-load-shedding', fastify: '5.x' })
