import type { FastifyInstance } from 'fastify'
import type { Config } from './config/index.js'
import { createMetrics, type Metrics, type Refusal } from './metrics/index.js'
import { connectSharedLimits, type SharedLimits } from './http/shared-limits.js'
import { databaseSystem } from './store/index.js'
import { combineObservers, type StoreObserver } from './store/observer.js'
import { combineWebhookObservers, type WebhookObserver } from './webhooks/observer.js'

/** What the service tells its operators (metrics, traces), and the limits its replicas share. */
export interface Observability {
  /** Prometheus metrics, unless METRICS=false. */
  metrics?: Metrics
  /** With REDIS_URL: the stores of the limits that count across every replica. */
  limits?: SharedLimits
  /** Hears of the store's queue, batches and outages. */
  store: StoreObserver
  /** Hears of every webhook attempt, and may add headers to it (a traceparent). */
  webhooks?: WebhookObserver
  /** Counts a refusal of that kind (metrics), when metrics are on. */
  refused: (reason: Refusal) => (() => void) | undefined
  /** Sends the last spans and lets Redis go: after the store has closed, so that its last batches count. */
  close: () => Promise<void>
}

export type ObservabilityConfig = Pick<Config, 'metrics' | 'redisUrl' | 'redisKeyPrefix' | 'tracing' | 'databaseUrl'>

/** Metrics, traces and shared limits, as the config asks. */
export async function observe (app: FastifyInstance, config: ObservabilityConfig): Promise<Observability> {
  const tracing = config.tracing && (await import('./tracing/index.js'))
    .startTracing(config.tracing, databaseSystem(config.databaseUrl), app.log)
  if (tracing !== undefined) await app.register(tracing.plugin)
  const metrics = config.metrics ? createMetrics() : undefined
  const limits = config.redisUrl === undefined
    ? undefined
    : await connectSharedLimits({ url: config.redisUrl, keyPrefix: config.redisKeyPrefix, log: app.log, observer: metrics?.sharedLimits() })
  return {
    metrics,
    limits,
    store: combineObservers(metrics?.store, tracing?.store),
    webhooks: combineWebhookObservers(metrics?.webhooks, tracing?.webhooks),
    refused: (reason) => metrics && (() => metrics.refused(reason)),
    async close () {
      await tracing?.close()
      await limits?.close()
    }
  }
}
