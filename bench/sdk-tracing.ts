// The service's tracing (src/tracing/index.ts) as it would be with the OpenTelemetry SDK in place
// of our tracer and encoder (spans.ts, otlp-encode.ts): the same spans, started by
// @opentelemetry/sdk-trace's TracerProvider and exported by its BatchSpanProcessor through the
// OTLP/HTTP exporter of the configured protocol. Only the bench loads it (library.ts).
import { defaultTextMapGetter, defaultTextMapSetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Link, type Span } from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider, type Sampler } from '@opentelemetry/sdk-trace'
import type { FastifyPluginCallback, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { TracingConfig } from '../src/config/index.js'
import type { StoreLogger } from '../src/store/outage.js'
import type { Tracing } from '../src/tracing/index.js'
import { hostName, hostPort } from '../src/tracing/requests.js'

const kSpan = Symbol('plant-store SDK request span')

declare module 'fastify' {
  interface FastifyRequest {
    [kSpan]: { span: Span, error?: Error } | null
  }
}

// As src/tracing/index.ts and requests.ts have them.
const UNTRACED = new Set(['/health', '/ready', '/metrics'])
const MAX_LINKS = 1000
const FLUSH_TIMEOUT = 2000
const METHODS = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'QUERY', 'TRACE'])

function sampler ({ name, ratio }: TracingConfig['sampler']): Sampler {
  const root = name.endsWith('always_off') ? new AlwaysOffSampler() : name.endsWith('traceidratio') ? new TraceIdRatioBasedSampler(ratio) : new AlwaysOnSampler()
  return name.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root
}

export function startTracing (config: TracingConfig, database: 'sqlite' | 'postgresql', log: StoreLogger): Tracing {
  const exporter = config.protocol === 'http/json' ? new JsonExporter({ url: config.url }) : new ProtobufExporter({ url: config.url })
  const provider = new TracerProvider({
    sampler: sampler(config.sampler),
    resource: resourceFromAttributes({ 'service.name': config.serviceName }),
    spanLimits: { linkCountLimit: MAX_LINKS },
    spanProcessors: [new BatchSpanProcessor({ exporter })]
  })
  const tracer = provider.getTracer('plant-store')
  const propagator = new W3CTraceContextPropagator()

  // The sampler sees the method for a name, as ours does; a sampled span gets its route and attributes.
  // A probe's sampled span is never ended, so never exported: ours reads the route after sampling too.
  function start (request: FastifyRequest): Span | undefined {
    const parent = request.headers.traceparent === undefined ? ROOT_CONTEXT : propagator.extract(ROOT_CONTEXT, request.headers, defaultTextMapGetter)
    const span = tracer.startSpan(request.method, { kind: SpanKind.SERVER }, parent)
    if (!span.isRecording()) return undefined
    const route = request.routeOptions.url
    if (route !== undefined && UNTRACED.has(route)) return undefined
    const method = METHODS.has(request.method) ? request.method : '_OTHER'
    const verb = method === '_OTHER' ? 'HTTP' : method
    span.updateName(route === undefined ? verb : `${verb} ${route}`)
    const url = request.url
    const query = url.indexOf('?')
    const scheme = request.protocol
    const host = request.host
    span.setAttributes({
      'http.request.method': method,
      'url.path': query === -1 ? url : url.slice(0, query),
      'url.scheme': scheme,
      'server.address': hostName(host),
      'server.port': hostPort(host) ?? (scheme === 'https' ? 443 : 80)
    })
    if (method === '_OTHER') span.setAttribute('http.request.method_original', request.method)
    if (route !== undefined) span.setAttribute('http.route', route)
    return span
  }

  const plugin: FastifyPluginCallback = (app, _options, done) => {
    app.decorateRequest(kSpan, null)
    app.addHook('onRequest', (request, _reply, next) => {
      const span = start(request)
      request[kSpan] = span === undefined ? null : { span }
      next()
    })
    app.addHook('onError', (request, _reply, error, next) => {
      const traced = request[kSpan]
      if (traced !== null) traced.error = error
      next()
    })
    app.addHook('onResponse', (request, reply, next) => {
      const traced = request[kSpan]
      if (traced !== null) {
        const { span, error } = traced
        const status = reply.statusCode
        span.setAttribute('http.response.status_code', status)
        if (status >= 500) {
          span.setAttribute('error.type', error?.name ?? String(status))
          span.setStatus({ code: SpanStatusCode.ERROR, message: error?.message })
        }
        span.end()
      }
      next()
    })
    done()
  }
  const spanOf = (origin: object | undefined): Span | undefined => (origin as Partial<FastifyRequest> | undefined)?.[kSpan]?.span

  return {
    plugin: fp(plugin, { name: 'plant-store-tracing', fastify: '5.x' }),
    store: {
      batch (size, writes) {
        let first: Span | undefined
        const links: Link[] = []
        for (const { origin } of writes) {
          const span = spanOf(origin)
          if (span === undefined) continue
          first ??= span
          if (links.length < MAX_LINKS) links.push({ context: span.spanContext() })
        }
        if (first === undefined) return undefined
        const span = tracer.startSpan('store commit', {
          kind: SpanKind.CLIENT,
          attributes: { 'db.system.name': database, 'db.operation.name': 'COMMIT', 'db.operation.batch.size': size },
          links
        }, trace.setSpan(ROOT_CONTEXT, first))
        return () => span.end()
      }
    },
    webhooks: {
      attempt (delivery) {
        const url = new URL(delivery.url)
        const span = tracer.startSpan('webhook attempt', {
          kind: SpanKind.CLIENT,
          attributes: {
            'http.request.method': 'POST',
            'server.address': url.hostname,
            'server.port': Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
            'plant_store.webhook.delivery_id': delivery.id,
            'plant_store.webhook.attempt': delivery.attempts + 1
          }
        }, ROOT_CONTEXT)
        const headers: Record<string, string> = {}
        propagator.inject(trace.setSpan(ROOT_CONTEXT, span), headers, defaultTextMapSetter)
        return {
          headers,
          end (outcome) {
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
      try {
        if (await Promise.race([provider.shutdown(), late]) === 'late') log.warn({}, 'the trace collector did not take the last spans in time: they are lost')
      } catch (error) {
        log.warn({ reason: (error as Error).message }, 'the trace collector did not take the last spans: they are lost')
      }
    }
  }
}
