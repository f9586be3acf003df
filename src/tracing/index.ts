// Loaded only when tracing is configured (src/app.ts imports it on demand):
// without an OTLP endpoint no OpenTelemetry SDK module is loaded at all.
import { FastifyOtelInstrumentation } from '@fastify/otel'
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider, type Sampler } from '@opentelemetry/sdk-trace'
import type { FastifyPluginCallback } from 'fastify'
import type { TracingConfig } from '../config.js'
import type { StoreObserver } from '../store/observer.js'
import type { StoreLogger } from '../store/outage.js'
import type { WebhookObserver } from '../webhooks/observer.js'

export interface Tracing {
  /** @fastify/otel: a span per request, and one per hook and handler under it. Register it first. */
  plugin: FastifyPluginCallback
  /** A span per store batch commit, a child of the span whose write opened the batch. */
  store: StoreObserver
  /** A span per webhook attempt, whose traceparent goes on the attempt's request. */
  webhooks: WebhookObserver
  tracer: Tracer
  /** Sends the spans still buffered, then stops. */
  close (): Promise<void>
}

// The longest a shutdown waits for the collector to take the last spans, in ms.
const FLUSH_TIMEOUT = 2000
// One export, its retries included, in ms: a collector that is down only loses spans.
const EXPORT_TIMEOUT = 5000

// The probes are asked every few seconds by load balancers: their spans would be noise.
const UNTRACED = new Set(['/health', '/ready'])

let globalsSet = false

// Which span is current, and how a trace crosses HTTP, are the process's, not an
// app's: set once. Each app keeps its own provider and exporter.
function setGlobals (): void {
  if (globalsSet) return
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  propagation.setGlobalPropagator(new W3CTraceContextPropagator())
  globalsSet = true
}

// The standard samplers by their OTEL_TRACES_SAMPLER names (@opentelemetry/sdk-trace reads no variables itself).
function sampler ({ name, ratio }: TracingConfig['sampler']): Sampler {
  const root = name.endsWith('always_off') ? new AlwaysOffSampler() : name.endsWith('traceidratio') ? new TraceIdRatioBasedSampler(ratio) : new AlwaysOnSampler()
  // parentbased_*: a request that comes with a traceparent follows the caller's decision; the root sampler decides the rest.
  return name.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root
}

/**
 * Traces exported over OTLP/HTTP to `config.url`; `database` names the store in
 * its spans. A collector that cannot be reached costs the spans, never a request:
 * they are exported in the background, and a shutdown waits for it two seconds at most.
 */
export function startTracing (config: TracingConfig, database: 'sqlite' | 'postgresql', log: StoreLogger): Tracing {
  setGlobals()
  // The exporters read the rest of the standard variables (OTEL_EXPORTER_OTLP_HEADERS, …) themselves.
  const options = { url: config.url, timeoutMillis: EXPORT_TIMEOUT }
  const exporter = config.protocol === 'http/json' ? new JsonExporter(options) : new ProtobufExporter(options)
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName }),
    sampler: sampler(config.sampler),
    spanProcessors: [new BatchSpanProcessor({ exporter })]
  })
  const tracer = provider.getTracer('plant-store')

  const instrumentation = new FastifyOtelInstrumentation({ ignorePaths: (route) => UNTRACED.has(route.url) })
  instrumentation.setTracerProvider(provider)

  return {
    plugin: instrumentation.plugin(),
    tracer,
    store: {
      batch (size) {
        const span = tracer.startSpan('store commit', {
          kind: SpanKind.CLIENT,
          attributes: { 'db.system.name': database, 'db.operation.name': 'COMMIT', 'db.operation.batch.size': size }
        })
        return () => span.end()
      }
    },
    webhooks: {
      attempt (delivery) {
        // A trace of its own: the sender works in the background, for no request of now.
        const span = tracer.startSpan('webhook attempt', {
          kind: SpanKind.CLIENT,
          attributes: {
            'http.request.method': 'POST',
            'server.address': new URL(delivery.url).hostname,
            'plant_store.webhook.delivery_id': delivery.id,
            'plant_store.webhook.attempt': delivery.attempts + 1
          }
        }, ROOT_CONTEXT)
        const headers: Record<string, string> = {}
        propagation.inject(trace.setSpan(context.active(), span), headers)
        return {
          headers,
          end (outcome) {
            span.setAttribute('plant_store.webhook.outcome', outcome.result)
            if (outcome.status !== undefined) span.setAttribute('http.response.status_code', outcome.status)
            if (outcome.result !== 'succeeded') span.setStatus({ code: SpanStatusCode.ERROR, message: 'error' in outcome && outcome.error !== undefined ? outcome.error : outcome.result })
            span.end()
          }
        }
      }
    },
    async close () {
      const late = new Promise<'late'>((resolve) => setTimeout(resolve, FLUSH_TIMEOUT, 'late').unref())
      try {
        if (await Promise.race([provider.shutdown(), late]) === 'late') log.warn({ url: config.url }, 'the trace collector did not take the last spans in time: they are lost')
      } catch (error) {
        log.warn({ url: config.url, reason: (error as Error).message }, 'the trace collector did not take the last spans: they are lost')
      }
    }
  }
}
