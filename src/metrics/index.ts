// src/metrics: the Prometheus metrics of requests, refusals, the store and webhooks.

import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { SharedLimitsObserver } from '../http/shared-limits.js'
import type { StoreObserver } from '../store/observer.js'
import type { WebhookStore } from '../store/webhook-types.js'
import type { WebhookObserver } from '../webhooks/observer.js'

/** Why a request was refused before it reached its route. */
export type Refusal = 'rate_limit' | 'auth_failures' | 'load_shedding'

export interface Metrics {
  /** This app's own registry: several apps in one process never share a metric. */
  registry: Registry
  /** Counts one answered request. `route` is a template or a fixed word, never a raw URL. */
  request (method: string, route: string, status: number, seconds: number): void
  refused (reason: Refusal): void
  /** What the store reports: its queue, each batch, outages. */
  store: StoreObserver
  /** What the limits shared through Redis report; their metrics exist once this is called. */
  sharedLimits (): SharedLimitsObserver
  /** Each webhook attempt: its outcome and how long it took. */
  webhooks: WebhookObserver
  /** Reads the webhook backlog from `store` whenever metrics are scraped. */
  watchBacklog (store: Pick<WebhookStore, 'backlog'>): void
}

// Methods outside this set (Node's parser knows some thirty) share one label value.
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'])

// From a fast read to a store that waits out DATABASE_TIMEOUT.
const SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** The service's Prometheus metrics, on prom-client. */
export function createMetrics (): Metrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })

  const durations = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from the request\'s arrival to its answer, by method, route template and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: SECONDS,
    registers: [registry]
  })
  // The histogram's count, under the name dashboards expect: copied when scraped, so
  // that a request pays for one observation, not two.
  // eslint-disable-next-line no-new -- registered: read when scraped
  new Counter({
    name: 'http_requests_total',
    help: 'Requests answered, by method, route template and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers: [registry],
    async collect () {
      this.reset()
      for (const { metricName, labels, value } of (await durations.get()).values) {
        if (metricName === 'http_request_duration_seconds_count') this.inc(labels, value)
      }
    }
  })
  const refusals = new Counter({
    name: 'plant_store_requests_refused_total',
    help: 'Requests refused before their route: rate_limit (429 per token), auth_failures (429 per address), load_shedding (503)',
    labelNames: ['reason'] as const,
    registers: [registry]
  })
  for (const reason of ['rate_limit', 'auth_failures', 'load_shedding'] as const) refusals.inc({ reason }, 0)

  const batchSizes = new Histogram({
    name: 'plant_store_batch_size',
    help: 'Writes committed together in one batch (group commit)',
    buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
    registers: [registry]
  })
  const commits = new Histogram({
    name: 'plant_store_commit_duration_seconds',
    help: 'Time to commit one batch of writes, failed ones included',
    buckets: SECONDS,
    registers: [registry]
  })
  let depths: Array<() => number> = []
  // eslint-disable-next-line no-new -- registered: read when scraped
  new Gauge({
    name: 'plant_store_queue_depth',
    help: 'Writes waiting for a batch to take them',
    registers: [registry],
    collect () { this.set(depths.reduce((sum, depth) => sum + depth(), 0)) }
  })
  const available = new Gauge({
    name: 'plant_store_available',
    help: '1 while the store answers, 0 during an outage (its requests get 503)',
    registers: [registry]
  })
  available.set(1)
  const outages = new Counter({
    name: 'plant_store_outages_total',
    help: 'Times the store became unavailable',
    registers: [registry]
  })

  const attempts = new Counter({
    name: 'plant_store_webhook_attempts_total',
    help: 'Webhook attempts by outcome: succeeded, retry (failed, tried again later), failed (the schedule is spent), gone (410: endpoint disabled)',
    labelNames: ['outcome'] as const,
    registers: [registry]
  })
  for (const outcome of ['succeeded', 'retry', 'failed', 'gone'] as const) attempts.inc({ outcome }, 0)
  const attemptTimes = new Histogram({
    name: 'plant_store_webhook_attempt_duration_seconds',
    help: 'Time from a webhook attempt\'s start to its outcome (answer, error or timeout)',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry]
  })
  let backlog: Pick<WebhookStore, 'backlog'> | undefined
  // Read once per scrape for both gauges (the first to be collected asks the store).
  let reading: Promise<{ pending: number, oldest?: Date } | undefined> | undefined
  const readBacklog = async () => {
    reading ??= (backlog?.backlog() ?? Promise.resolve(undefined))
      // A store in an outage has no figures to give: the scrape goes on without them.
      .catch(() => undefined)
      .finally(() => setImmediate(() => { reading = undefined }))
    return await reading
  }
  // eslint-disable-next-line no-new -- registered: read when scraped
  new Gauge({
    name: 'plant_store_webhook_backlog',
    help: 'Webhook deliveries pending (due now or waiting for a retry)',
    registers: [registry],
    async collect () {
      const figures = await readBacklog()
      if (figures !== undefined) this.set(figures.pending)
    }
  })
  // eslint-disable-next-line no-new -- registered: read when scraped
  new Gauge({
    name: 'plant_store_webhook_oldest_pending_age_seconds',
    help: 'Age of the oldest pending webhook delivery, in seconds (0 when none is pending)',
    registers: [registry],
    async collect () {
      const figures = await readBacklog()
      if (figures !== undefined) this.set(figures.oldest === undefined ? 0 : Math.max(0, (Date.now() - figures.oldest.getTime()) / 1000))
    }
  })

  // The histogram's child of each label set seen, made once rather than per request.
  const children = new Map<string, ReturnType<typeof durations.labels>>()

  return {
    registry,

    request (raw, route, status, seconds) {
      const method = METHODS.has(raw) ? raw : 'other'
      const key = `${method} ${route} ${status}`
      let child = children.get(key)
      if (child === undefined) {
        child = durations.labels({ method, route, status_code: String(status) })
        children.set(key, child)
      }
      child.observe(seconds)
    },

    refused (reason) {
      refusals.inc({ reason })
    },

    sharedLimits () {
      const redisAvailable = new Gauge({
        name: 'plant_store_shared_limits_available',
        help: '1 while the Redis of the shared rate limits answers, 0 while it does not (limits are then not enforced)',
        registers: [registry]
      })
      redisAvailable.set(1)
      const unchecked = new Counter({
        name: 'plant_store_shared_limits_errors_total',
        help: 'Rate-limit checks Redis could not answer: each let its request through (fail open)',
        registers: [registry]
      })
      return {
        available: (up) => redisAvailable.set(up ? 1 : 0),
        failed: () => unchecked.inc()
      }
    },

    webhooks: {
      attempt () {
        const end = attemptTimes.startTimer()
        return {
          end (outcome) {
            end()
            attempts.inc({ outcome: outcome.result })
          }
        }
      }
    },

    watchBacklog (store) {
      backlog = store
    },

    store: {
      queue (depth) {
        depths = [...depths, depth]
      },
      batch (size) {
        batchSizes.observe(size)
        const end = commits.startTimer()
        return () => { end() }
      },
      available (up) {
        available.set(up ? 1 : 0)
        if (!up) outages.inc()
      }
    }
  }
}
