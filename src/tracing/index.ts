// src/tracing: OpenTelemetry traces of requests, the store and webhooks, sent over OTLP.
import { defaultTextMapSetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace, type Link, type SpanContext } from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, TraceIdRatioBasedSampler, type Sampler } from '@opentelemetry/sdk-trace'
import type { FastifyPluginCallback } from 'fastify'
import type { TracingConfig } from '../config/index.js'
import { endpointSecrets, redactEndpoint, redactSecrets } from '../config/redact.js'
import type { StoreObserver } from '../store/observer.js'
import type { FastifyBaseLogger } from 'fastify'
import type { WebhookObserver } from '../webhooks/observer.js'
import { SpanExport } from './export.js'
import { traceRequests } from './requests.js'
import { RandomIds, rootBound, SpanTracer, type RecordedSpan } from './spans.js'

export interface Tracing {
  /** A server span per sampled request. Register it first, at the root. */
  plugin: FastifyPluginCallback
  /** A span per store batch that carried a sampled request, linked to each of them. */
  store: StoreObserver
  /** A span per webhook attempt, whose traceparent goes on the attempt's request. */
  webhooks: WebhookObserver
  /** Sends the spans still buffered, then stops. */
  close (): Promise<void>
}

// The longest a shutdown waits for the collector to take the last spans, in ms.
const FLUSH_TIMEOUT = 2000

// The probes are asked every few seconds by load balancers, and /metrics by Prometheus.
const UNTRACED = new Set(['/health', '/ready', '/metrics'])
// The most links a batch's span keeps: the largest batch (SQLite's; PostgreSQL's are smaller).
const MAX_LINKS = 1000

// The standard samplers by their OTEL_TRACES_SAMPLER names.
function sampler ({ name, ratio }: TracingConfig['sampler']): Sampler {
  const root = name.endsWith('always_off') ? new AlwaysOffSampler() : name.endsWith('traceidratio') ? new TraceIdRatioBasedSampler(ratio) : new AlwaysOnSampler()
  // parentbased_*: a request that comes with a traceparent follows the caller's decision.
  return name.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root
}

/** Traces exported over OTLP/HTTP to `config.url`; `database` names the store in its spans. */
export function startTracing (config: TracingConfig, database: 'sqlite' | 'postgresql', log: Pick<FastifyBaseLogger, 'info' | 'warn'>): Tracing {
  // No global context manager or propagator.
  const propagator = new W3CTraceContextPropagator()
  const exporter = new SpanExport({ url: config.url, protocol: config.protocol, serviceName: config.serviceName, log })
  const tracer = new SpanTracer(sampler(config.sampler), exporter.record, new RandomIds(), rootBound(config.sampler.name, config.sampler.ratio))
  const requests = traceRequests({ tracer, propagator, untraced: UNTRACED, callerDecides: config.sampler.name.startsWith('parentbased_') })

  return {
    plugin: requests.plugin,
    store: {
      batch (size, writes) {
        // A child of the first sampled request it carried, so that it shares its sampling.
        let first: RecordedSpan | undefined
        const links: Link[] = []
        for (const { origin } of writes) {
          const span = requests.spanOf(origin)
          if (span === undefined) continue
          first ??= span
          if (links.length < MAX_LINKS) links.push({ context: span.spanContext() })
        }
        if (first === undefined) return undefined
        // Not asked of the sampler: every standard one records a child of a span this process records.
        const span = tracer.start('store commit', SpanKind.CLIENT,
          { 'db.system.name': database, 'db.operation.name': 'COMMIT', 'db.operation.batch.size': size }, first.traceId, first.spanContext(), links)
        return () => span.end()
      }
    },
    webhooks: {
      attempt (delivery) {
        // A trace of its own: the sender works in the background, for no request of now.
        const url = new URL(delivery.url)
        const span = tracer.startSpan('webhook attempt', SpanKind.CLIENT, {
          'http.request.method': 'POST',
          'server.address': url.hostname,
          'server.port': Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
          'plant_store.webhook.delivery_id': delivery.id,
          'plant_store.webhook.attempt': delivery.attempts + 1
        })
        // A receiver that traces gets the attempt's trace, or one that says it was not sampled.
        const context: SpanContext = span?.spanContext() ?? { traceId: tracer.ids.traceId(), spanId: tracer.ids.spanId(), traceFlags: TraceFlags.NONE }
        const headers: Record<string, string> = {}
        propagator.inject(trace.setSpanContext(ROOT_CONTEXT, context), headers, defaultTextMapSetter)
        return {
          headers,
          end (outcome) {
            if (span === undefined) return
            span.setAttribute('plant_store.webhook.outcome', outcome.result)
            if (outcome.status !== undefined) span.setAttribute('http.response.status_code', outcome.status)
            if (outcome.result !== 'succeeded') {
              span.setAttribute('error.type', outcome.status === undefined ? '_OTHER' : String(outcome.status))
              span.setStatus({ code: SpanStatusCode.ERROR, message: 'error' in outcome && outcome.error !== undefined ? outcome.error : outcome.result })
            }
            span.end()
          }
        }
      }
    },
    async close () {
      const late = new Promise<'late'>((resolve) => setTimeout(resolve, FLUSH_TIMEOUT, 'late').unref())
      // The endpoint may carry credentials (user info): never logged.
      const url = redactEndpoint(config.url)
      try {
        if (await Promise.race([exporter.close(), late]) === 'late') log.warn({ url }, 'the trace collector did not take the last spans in time: they are lost')
      } catch (error) {
        log.warn({ url, reason: redactSecrets((error as Error).message, endpointSecrets(config.url)) }, 'the trace collector did not take the last spans: they are lost')
      }
    }
  }
}
