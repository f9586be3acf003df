import type { FastifyInstance } from 'fastify'
import type { EventFeed } from '../../src/store/feed-types.js'
import { StoreUnavailableError } from '../../src/store/types.js'

// How often, in ms, the events older than the retention are dropped: at most this much later than due.
const EVERY = 60_000

/** Drops the events older than `retention` once ready, then every minute, until the app closes. */
export function pruneInBackground (fastify: FastifyInstance, feed: EventFeed, retention: number): void {
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined
  const prune = (): void => {
    running = feed.prune(new Date(Date.now() - retention)).then(
      (pruned) => { if (pruned > 0) fastify.log.info({ pruned }, 'change feed: old events dropped') },
      (error: unknown) => {
        // An outage of the store is logged by the store, once: not again at every turn.
        /* c8 ignore next -- a fault other than an outage (a broken schema) is not arranged by the feed's tests */
        if (!(error instanceof StoreUnavailableError)) fastify.log.warn({ err: error }, 'change feed: pruning failed; it is tried again later')
      })
  }
  fastify.addHook('onReady', async () => {
    prune()
    timer = setInterval(prune, Math.min(EVERY, retention)).unref()
  })
  fastify.addHook('preClose', async () => {
    clearInterval(timer)
    await running
  })
}
