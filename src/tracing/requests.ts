import { randomFillSync } from 'node:crypto'
import { defaultTextMapGetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Link, type Span, type TextMapPropagator, type Tracer } from '@opentelemetry/api'
import { RandomIdGenerator, SamplingDecision, type IdGenerator, type Sampler } from '@opentelemetry/sdk-trace'
import type { FastifyError, FastifyPluginCallback, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'

const kSpan = Symbol('plant-store request span')
const kError = Symbol('plant-store request error')

declare module 'fastify' {
  interface FastifyRequest {
    [kSpan]: Span | null
    [kError]: FastifyError | null
  }
}

// The methods HTTP's semantic conventions name as they are; any other is `_OTHER`.
const METHODS = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'QUERY', 'TRACE'])
const NO_ATTRIBUTES: Attributes = Object.freeze({})
const NO_LINKS: Link[] = Object.freeze([]) as unknown as Link[]

/**
 * Trace ids that the sampler has seen before the span exists: a request's new
 * trace is decided on an id drawn here, and only a sampled one becomes a span,
 * with that id (so a trace-id ratio means what it says, in every service).
 */
export class DecidedTraceIds implements IdGenerator {
  private readonly random = new RandomIdGenerator()
  private decided: string | undefined
  // Drawn for every request that comes without a trace, sampled or not: cut from a pool of
  // random bytes, filled 256 ids at a time, rather than made a character at a time.
  private readonly pool = Buffer.alloc(16 * 256)
  private at = this.pool.length

  draw (): string {
    if (this.at === this.pool.length) {
      randomFillSync(this.pool)
      this.at = 0
    }
    this.at += 16
    return this.pool.toString('hex', this.at - 16, this.at)
  }

  /** Runs `start` so that the root span it starts takes `traceId`. */
  withTraceId<T> (traceId: string, start: () => T): T {
    this.decided = traceId
    try {
      return start()
    } finally {
      this.decided = undefined
    }
  }

  generateTraceId (): string {
    return this.decided ?? this.random.generateTraceId()
  }

  generateSpanId (): string {
    return this.random.generateSpanId()
  }
}

export interface RequestTracingOptions {
  tracer: Tracer
  /** The provider's sampler, asked before any span exists. */
  sampler: Sampler
  /** The provider's id generator. */
  ids: DecidedTraceIds
  /** Reads a caller's traceparent. */
  propagator: TextMapPropagator
  /** Route templates that get no span (the probes). */
  untraced: ReadonlySet<string>
  /**
   * The sampler follows a caller's decision (a parentbased_* sampler with its defaults): a
   * request whose traceparent says its caller did not sample it is then not sampled either.
   */
  callerDecides?: boolean
}

// A version 00 traceparent whose flags say not sampled (the last bit clear), ids not all zeros.
const NOT_SAMPLED = /^00-(?!0{32})[\da-f]{32}-(?!0{16})[\da-f]{16}-[\da-f][02468ace]$/

export interface RequestTracing {
  /** A server span per request, from onRequest to onResponse. Register it first, at the root. */
  plugin: FastifyPluginCallback
  /** The span of a request (a write's origin) that is being traced. */
  spanOf (origin: object | undefined): Span | undefined
}

/**
 * One span per sampled request, named by its method and route template, with
 * HTTP's semantic conventions; nothing else. The sampler is asked first: a
 * request it does not sample gets no span, no context and no allocation beyond
 * reading its traceparent, and no context is carried through callbacks, so the
 * spans that join a request's trace (the store's batch) are given it explicitly.
 */
export function traceRequests ({ tracer, sampler, ids, propagator, untraced, callerDecides = false }: RequestTracingOptions): RequestTracing {
  function start (request: FastifyRequest): Span | undefined {
    const traceparent = request.headers.traceparent
    // The sampler would follow a caller that did not sample: no span, and no context made to learn it.
    if (callerDecides && typeof traceparent === 'string' && NOT_SAMPLED.test(traceparent)) return undefined
    const parent: Context = traceparent === undefined ? ROOT_CONTEXT : propagator.extract(ROOT_CONTEXT, request.headers, defaultTextMapGetter)
    const traceId = trace.getSpanContext(parent)?.traceId ?? ids.draw()
    // The standard samplers decide on the trace id and the parent alone: asked with the method
    // for a name, they let the route be looked up (an object Fastify builds) for sampled requests only.
    if (sampler.shouldSample(parent, traceId, request.method, SpanKind.SERVER, NO_ATTRIBUTES, NO_LINKS).decision === SamplingDecision.NOT_RECORD) return undefined
    const route = request.routeOptions.url
    if (route !== undefined && untraced.has(route)) return undefined
    const method = METHODS.has(request.method) ? request.method : '_OTHER'
    // As HTTP's conventions name a server span: `HTTP` for a method they do not name.
    const verb = method === '_OTHER' ? 'HTTP' : method
    const name = route === undefined ? verb : `${verb} ${route}`

    const url = request.url
    const query = url.indexOf('?')
    const attributes: Attributes = {
      'http.request.method': method,
      'url.path': query === -1 ? url : url.slice(0, query),
      'url.scheme': request.protocol,
      'server.address': request.hostname,
      // From the Host header as the client wrote it, or its scheme's default: not the port behind a proxy.
      'server.port': request.port ?? (request.protocol === 'https' ? 443 : 80)
    }
    if (method === '_OTHER') attributes['http.request.method_original'] = request.method
    if (route !== undefined) attributes['http.route'] = route
    return ids.withTraceId(traceId, () => tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent))
  }

  const plugin: FastifyPluginCallback = (app, _options, done) => {
    app.decorateRequest(kSpan, null)
    app.decorateRequest(kError, null)
    app.addHook('onRequest', (request, _reply, next) => {
      request[kSpan] = start(request) ?? null
      next()
    })
    app.addHook('onError', (request, _reply, error, next) => {
      if (request[kSpan] !== null) request[kError] = error
      next()
    })
    app.addHook('onResponse', (request, reply, next) => {
      const span = request[kSpan]
      if (span !== null) {
        const status = reply.statusCode
        span.setAttribute('http.response.status_code', status)
        // A server's span is an error for a 5xx only: a 4xx is the client's.
        if (status >= 500) {
          const error = request[kError]
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
