import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { MetricsText } from '../schemas/metrics.js'
import type { Metrics } from '../src/metrics/index.js'

export interface MetricsOptions {
  /** The app's metrics; undefined turns this plugin off. */
  metrics?: Metrics
}

// `/plants/:id` is labelled `/plants/{id}`, as the API document writes it.
function toTemplate (url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
}

/** Counts and times every answer of the app it is registered in, by method, route template and status. */
const requestMetrics: FastifyPluginAsync<MetricsOptions> = async (fastify, { metrics }) => {
  if (metrics === undefined) return
  const templates = new Map<string, string>()
  fastify.addHook('onResponse', (request, reply, done) => {
    const url = request.routeOptions.url
    let route = 'not_found'
    if (url !== undefined && !request.is404) {
      route = templates.get(url) ?? templates.set(url, toTemplate(url)).get(url) as string
    }
    metrics.request(request.method, route, reply.statusCode, reply.elapsedTime / 1000)
    done()
  })
}

/** GET /metrics: the exposition Prometheus scrapes. Register it where its auth applies. */
export const metricsRoute: FastifyPluginAsync<MetricsOptions> = async (fastify, { metrics }) => {
  if (metrics === undefined) return
  fastify.get('/metrics', {
    // Prometheus scrapes every few seconds: its success is not worth a log line.
    logLevel: 'warn',
    config: { scope: 'metrics' },
    schema: {
      summary: 'Metrics for Prometheus',
      description: 'Request counts and durations by route template, the store\'s batches, queue and outages, refusals, and the process\'s own metrics.',
      operationId: 'metrics',
      tags: ['operations'],
      response: { 200: { description: 'The metrics', content: { [metrics.registry.contentType]: { schema: MetricsText } } } }
    }
  }, async (_request, reply) => {
    reply.type(metrics.registry.contentType)
    return await metrics.registry.metrics()
  })
}

export default fp(requestMetrics, { name: 'plant-store-metrics', fastify: '5.x' })
