import { defaultTextMapGetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type SpanContext, type TextMapPropagator } from '@opentelemetry/api'
import type { FastifyPluginCallback, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { RecordedSpan, SpanAttributes, SpanTracer } from './spans.js'

const kSpan = Symbol('plant-store request span')

declare module 'fastify' {
  interface FastifyRequest {
    // One decorator: Fastify sets each of them in every request's constructor, sampled or not.
    [kSpan]: RecordedSpan | null
  }
}

// The methods HTTP's semantic conventions name as they are; any other is `_OTHER`.
const METHODS = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'QUERY', 'TRACE'])

export interface RequestTracingOptions {
  /** Asks the sampler before any span exists, and starts the sampled ones. */
  tracer: SpanTracer
  /** Reads a caller's traceparent. */
  propagator: TextMapPropagator
  /** Route templates that get no span (the probes). */
  untraced: ReadonlySet<string>
  /** The sampler follows a caller's decision (a parentbased_* sampler with its defaults). */
  callerDecides?: boolean
}

// A version 00 traceparent whose flags say not sampled (the last bit clear), ids not all zeros.
const NOT_SAMPLED = /^00-(?!0{32})[\da-f]{32}-(?!0{16})[\da-f]{16}-[\da-f][02468ace]$/

/** A Host value's name, as Fastify's request.hostname gives it: an IPv6 literal keeps its brackets. */
export function hostName (host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1)
  const colon = host.indexOf(':')
  return colon === -1 ? host : host.slice(0, colon)
}

/** A Host value's port, as Fastify's request.port gives it (`:` and digits at its end), or null. */
export function hostPort (host: string): number | null {
  const colon = host.lastIndexOf(':')
  if (colon === -1 || colon === host.length - 1) return null
  for (let i = colon + 1; i < host.length; i++) {
    const code = host.charCodeAt(i)
    if (code < 48 || code > 57) return null
  }
  return parseInt(host.slice(colon + 1), 10)
}

export interface RequestTracing {
  /** A server span per request, from onRequest to onResponse. Register it first, at the root. */
  plugin: FastifyPluginCallback
  /** The span of a request (a write's origin) that is being traced. */
  spanOf (origin: object | undefined): RecordedSpan | undefined
}

/** One span per sampled request, named by its method and route template, with HTTP's semantic conventions. */
export function traceRequests ({ tracer, propagator, untraced, callerDecides = false }: RequestTracingOptions): RequestTracing {
  function start (request: FastifyRequest): RecordedSpan | undefined {
    const traceparent = request.headers.traceparent
    // The standard samplers decide on the trace id and the parent alone.
    if (traceparent === undefined) {
      // A new trace: decided on its id's bytes, and only a sampled one's id is written out.
      const traceId = tracer.newTrace(request.method, SpanKind.SERVER)
      return traceId === undefined ? undefined : open(request, traceId, undefined)
    }
    // The sampler would follow a caller that did not sample: no span, and no context made to learn it.
    if (callerDecides && typeof traceparent === 'string' && NOT_SAMPLED.test(traceparent)) return undefined
    const parent: Context = propagator.extract(ROOT_CONTEXT, request.headers, defaultTextMapGetter)
    const caller = trace.getSpanContext(parent)
    const traceId = caller?.traceId ?? tracer.ids.traceId()
    if (!tracer.sampled(parent, traceId, request.method, SpanKind.SERVER)) return undefined
    return open(request, traceId, caller)
  }

  /** The server span of a request that is sampled. */
  function open (request: FastifyRequest, traceId: string, caller: SpanContext | undefined): RecordedSpan | undefined {
    const route = request.routeOptions.url
    if (route !== undefined && untraced.has(route)) return undefined
    const method = METHODS.has(request.method) ? request.method : '_OTHER'
    // As HTTP's conventions name a server span: `HTTP` for a method they do not name.
    const verb = method === '_OTHER' ? 'HTTP' : method
    const name = route === undefined ? verb : `${verb} ${route}`

    const url = request.url
    const query = url.indexOf('?')
    const scheme = request.protocol
    // Fastify's host (X-Forwarded-Host from a trusted proxy, else Host), read once.
    const host = request.host
    const port = hostPort(host)
    const attributes: SpanAttributes = {
      'http.request.method': method,
      'url.path': query === -1 ? url : url.slice(0, query),
      'url.scheme': scheme,
      'server.address': hostName(host),
      // From the Host header as the client wrote it, or its scheme's default: not the port behind a proxy.
      'server.port': port ?? (scheme === 'https' ? 443 : 80)
    }
    if (method === '_OTHER') attributes['http.request.method_original'] = request.method
    if (route !== undefined) attributes['http.route'] = route
    return tracer.start(name, SpanKind.SERVER, attributes, traceId, caller)
  }

  const plugin: FastifyPluginCallback = (app, _options, done) => {
    app.decorateRequest(kSpan, null)
    app.addHook('onRequest', (request, _reply, next) => {
      request[kSpan] = start(request) ?? null
      next()
    })
    app.addHook('onError', (request, _reply, error, next) => {
      const span = request[kSpan]
      if (span !== null) span.error = error
      next()
    })
    app.addHook('onResponse', (request, reply, next) => {
      const span = request[kSpan]
      if (span !== null) {
        const status = reply.statusCode
        span.setAttribute('http.response.status_code', status)
        // A server's span is an error for a 5xx only: a 4xx is the client's.
        if (status >= 500) {
          const error = span.error
          span.setAttribute('error.type', error?.name ?? String(status))
          span.setStatus({ code: SpanStatusCode.ERROR, message: error?.message })
        }
        span.end()
      }
      next()
    })
    done()
  }

  return {
    plugin: fp(plugin, { name: 'plant-store-tracing', fastify: '5.x' }),
    spanOf: (origin) => (origin as Partial<FastifyRequest> | undefined)?.[kSpan] ?? undefined
  }
}
