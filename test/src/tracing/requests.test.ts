import { createHash, randomFillSync } from 'node:crypto'
import { SpanKind } from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, TraceIdRatioBasedSampler, type Sampler } from '@opentelemetry/sdk-trace'
import Fastify from 'fastify'
import t, { type Test } from 'tap'
import { hostName, hostPort, traceRequests } from '../../../src/tracing/requests.js'
import { RandomIds, rootBound, SpanTracer, type RecordedSpan } from '../../../src/tracing/spans.js'

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736'
const PARENT_ID = '00f067aa0ba902b7'

// The plugin alone on a bare Fastify, its spans kept in memory; `started` counts the spans it asked for.
async function traced (t: Test, sampler: Sampler = new ParentBasedSampler({ root: new AlwaysOnSampler() }), callerDecides = sampler instanceof ParentBasedSampler) {
  const ended: RecordedSpan[] = []
  const tracer = new SpanTracer(sampler, (span) => { ended.push(span) })
  let started = 0
  const start = tracer.start.bind(tracer)
  tracer.start = (...args) => { started++; return start(...args) }
  let extracted = 0
  const w3c = new W3CTraceContextPropagator()
  const propagator = { fields: () => w3c.fields(), inject: w3c.inject.bind(w3c), extract: (...args: Parameters<typeof w3c.extract>) => { extracted++; return w3c.extract(...args) } }
  const requests = traceRequests({ tracer, propagator, untraced: new Set(['/health']), callerDecides })
  // Behind a proxy that says how the client called.
  const app = Fastify({ trustProxy: true })
  await app.register(requests.plugin)
  app.get('/health', async () => ({ status: 'ok' }))
  app.get('/plants/:id', async (request) => {
    const id = (request.params as { id: string }).id
    if (id === 'down') throw Object.assign(new Error('the store is down'), { name: 'StoreUnavailableError', statusCode: 503 })
    if (id === 'bad') throw Object.assign(new Error('id must be a number'), { statusCode: 400 })
    return { id }
  })
  app.get('/teapot', async (_request, reply) => reply.code(502).send({ bad: 'gateway' }))
  t.teardown(() => app.close())
  return { app, requests, spans: () => ended, started: () => started, extracted: () => extracted }
}

t.test('a server span per request, named by method and route template, with HTTP\'s semantic conventions', async (t) => {
  const { app, spans } = await traced(t)
  t.equal((await app.inject({ url: '/plants/7?verbose=1', headers: { host: 'plants.example:8443' } })).statusCode, 200)
  const [span] = spans()
  t.equal(span.name, 'GET /plants/:id')
  t.equal(span.kind, 1, 'SERVER')
  t.same(span.attributes, {
    'http.request.method': 'GET',
    'http.route': '/plants/:id',
    'url.path': '/plants/7',
    'url.scheme': 'http',
    'server.address': 'plants.example',
    'server.port': 8443,
    'http.response.status_code': 200
  })
  t.equal(span.status.code, 0, 'unset')
  t.equal(span.parent, undefined, 'a root span without a traceparent')

  // No port in the Host header: the scheme's own, as the client called it.
  await app.inject({ url: '/plants/8', headers: { host: 'plants.example' } })
  await app.inject({ url: '/plants/9', headers: { host: 'plants.example', 'x-forwarded-proto': 'https' } })
  t.same(spans().slice(1).map((span) => [span.attributes['url.scheme'], span.attributes['server.port']]), [['http', 80], ['https', 443]])
})

t.test('server.address and server.port: what Fastify\'s request.hostname and request.port read from the same host', async (t) => {
  const { app, spans } = await traced(t)
  // Fastify's own getters, in the handler, for the same request.
  const fastify: Array<[string, number | null]> = []
  app.get('/where', async (request) => {
    fastify.push([request.hostname, request.port])
    return {}
  })
  const hosts = ['plants.example:8443', 'plants.example', '127.0.0.1:3000', '[::1]:3000', '[::1]', '[2001:db8::7]:443', 'plants.example:', 'plants.example:80x', 'a:b:12', ':7']
  for (const host of hosts) await app.inject({ url: '/where', headers: { host } })
  // From a trusted proxy, X-Forwarded-Host is the host.
  await app.inject({ url: '/where', headers: { host: 'inner:8080', 'x-forwarded-host': 'front.example:9443' } })
  t.equal(fastify.length, hosts.length + 1)
  // No port in the host: http's default.
  t.same(spans().map((span) => [span.attributes['server.address'], span.attributes['server.port']]), fastify.map(([name, port]) => [name, port ?? 80]))
  t.same(hosts.map((host) => [hostName(host), hostPort(host)]), fastify.slice(0, hosts.length))
})

t.test('failures: a 5xx is an error with its exception type, or its status; a 4xx is not; a 404 has no route', async (t) => {
  const { app, spans } = await traced(t)
  t.equal((await app.inject('/plants/down')).statusCode, 503)
  t.equal((await app.inject('/teapot')).statusCode, 502)
  t.equal((await app.inject('/plants/bad')).statusCode, 400)
  t.equal((await app.inject('/nowhere')).statusCode, 404)
  t.equal((await app.inject({ method: 'PROPFIND', url: '/nowhere' })).statusCode, 404)
  const byName = (name: string) => spans().filter((span) => span.name === name)
  const [down] = byName('GET /plants/:id').filter((span) => span.attributes['url.path'] === '/plants/down')
  t.equal(down.attributes['error.type'], 'StoreUnavailableError')
  t.same(down.status, { code: 2, message: 'the store is down' })
  const [teapot] = byName('GET /teapot')
  t.equal(teapot.attributes['error.type'], '502', 'no exception: the status code')
  t.equal(teapot.status.code, 2)
  const [bad] = byName('GET /plants/:id').filter((span) => span.attributes['url.path'] === '/plants/bad')
  t.equal(bad.attributes['http.response.status_code'], 400)
  t.notOk('error.type' in bad.attributes, 'a 4xx is the client\'s error, not the server\'s')
  t.equal(bad.status.code, 0)
  const [nowhere] = byName('GET')
  t.notOk('http.route' in nowhere.attributes, 'no route matched: no http.route, and the name is the method alone')
  t.equal(nowhere.attributes['http.response.status_code'], 404)
  const [other] = byName('HTTP')
  t.equal(other.attributes['http.request.method'], '_OTHER', 'a method HTTP\'s conventions do not name')
  t.equal(other.attributes['http.request.method_original'], 'PROPFIND')
})

t.test('a caller\'s traceparent: sampled, the request joins its trace; not sampled, no span is even started', async (t) => {
  const { app, spans, started } = await traced(t)
  await app.inject({ url: '/plants/1', headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` } })
  t.equal(started(), 1)
  const [span] = spans()
  t.equal(span.spanContext().traceId, TRACE_ID)
  t.equal(span.parent?.spanId, PARENT_ID)
  t.equal(span.parent?.isRemote, true)

  for (let i = 0; i < 20; i++) await app.inject({ url: '/plants/2', headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-00` } })
  t.equal(started(), 1, 'no span for a request the caller did not sample')
  t.equal(spans().length, 1)
  t.equal((await app.inject('/health')).statusCode, 200)
  t.equal(started(), 1, 'the probes get none either')
})

t.test('a caller that did not sample, under a sampler that follows callers: its traceparent is not even read into a context', async (t) => {
  const { app, started, extracted } = await traced(t)
  for (const flags of ['00', '02', 'fe']) await app.inject({ url: '/plants/3', headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-${flags}` } })
  t.equal(started(), 0)
  t.equal(extracted(), 0)

  // Anything else is read as the propagator reads it, and decided as before.
  const others: Array<[string, number, string]> = [
    [`00-${TRACE_ID}-${PARENT_ID}-01`, 1, 'a caller that sampled'],
    [`01-${TRACE_ID}-${PARENT_ID}-00-later`, 0, 'a later version, not sampled'],
    [`00-${'0'.repeat(32)}-${PARENT_ID}-00`, 1, 'a trace id of zeros: invalid, so a new trace'],
    [`00-${TRACE_ID}-${'0'.repeat(16)}-00`, 1, 'a parent id of zeros: invalid, so a new trace'],
    [`00-${TRACE_ID.toUpperCase()}-${PARENT_ID}-00`, 1, 'upper-case hex: invalid, so a new trace']
  ]
  for (const [traceparent, spans, what] of others) {
    const before = started()
    await app.inject({ url: '/plants/4', headers: { traceparent } })
    t.equal(started() - before, spans, what)
  }
  t.equal(extracted(), others.length)
})

t.test('a sampler that does not follow callers samples a request whatever its traceparent says', async (t) => {
  const { app, started, extracted } = await traced(t, new AlwaysOnSampler())
  await app.inject({ url: '/plants/5', headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-00` } })
  t.equal(extracted(), 1)
  t.equal(started(), 1)
})

t.test('a ratio sampler decides on the id the trace then has, before any span exists', async (t) => {
  const { app, spans, started } = await traced(t, new TraceIdRatioBasedSampler(0.25))
  for (let i = 0; i < 200; i++) await app.inject('/plants/1')
  t.equal(started(), spans().length, 'a span is started only for a trace that is sampled')
  // Binomial(200, 0.25): outside 20..80 with a probability under one in a million.
  t.ok(spans().length >= 20 && spans().length <= 80, `${spans().length} of 200`)
  // The sampler's decision holds for the id the span has: the same sampler samples every one of them again.
  const sampler = new TraceIdRatioBasedSampler(0.25)
  t.ok(spans().every((span) => sampler.shouldSample({} as never, span.spanContext().traceId).decision === 2))
})

t.test('spanOf: the span of a request being traced, nothing for anything else', async (t) => {
  const { app, requests } = await traced(t)
  let seen: unknown = 'unset'
  app.get('/look', async (request) => { seen = requests.spanOf(request); return {} })
  await app.inject('/look')
  t.ok(seen !== undefined && (seen as { spanContext: unknown }).spanContext, 'the request\'s span')
  t.equal(requests.spanOf({}), undefined)
  t.equal(requests.spanOf(undefined), undefined, 'a write whose caller named no origin')
})

t.test('ids drawn for new traces and spans: lower-case hex of their W3C length, none twice, past a refill of the pool', async (t) => {
  const ids = new RandomIds()
  const traces = Array.from({ length: 1000 }, () => ids.traceId())
  const spans = Array.from({ length: 1000 }, () => ids.spanId())
  t.ok(traces.every((id) => /^[\da-f]{32}$/.test(id) && id !== '0'.repeat(32)), 'valid W3C trace ids')
  t.ok(spans.every((id) => /^[\da-f]{16}$/.test(id) && id !== '0'.repeat(16)), 'valid W3C span ids')
  t.equal(new Set(traces).size, traces.length, 'all different')
  t.equal(new Set(spans).size, spans.length, 'all different')

  // All zeros is not a valid id: such a draw is drawn again.
  let fills = 0
  const zerosFirst = new RandomIds((pool) => {
    fills++
    randomFillSync(pool)
    // The first trace id and the first span id after it come out as zeros.
    pool.fill(0, 0, 16).fill(0, 32, 40)
  })
  t.not(zerosFirst.traceId(), '0'.repeat(32), 'a trace id of zeros is drawn again')
  t.not(zerosFirst.spanId(), '0'.repeat(16), 'a span id of zeros is drawn again')
  t.equal(fills, 1, 'from the same pool')

  const zerosBelow = new RandomIds((pool) => { randomFillSync(pool).fill(0, 0, 16) })
  t.not(zerosBelow.traceIdBelow(0x100000000), '0'.repeat(32), 'a trace id of zeros is drawn again when the sampler keeps it too')
})

// The same random bytes every time it is made: two pools filled by it draw the same ids.
const sameBytes = () => {
  let block = 0
  return (pool: Buffer) => {
    for (let at = 0; at < pool.length; at += 32) createHash('sha256').update(String(block++)).digest().copy(pool, at)
  }
}

t.test('a new trace is decided on its id\'s bytes, as the standard sampler decides on the id it then has', async (t) => {
  const DRAWS = 20_000
  const cases: Array<[string, number, Sampler, number]> = [
    // name, ratio, the @opentelemetry/sdk-trace sampler loadConfig's names make, the share it keeps
    ['parentbased_traceidratio', 0.1, new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0.1) }), 0.1],
    ['traceidratio', 0.5, new TraceIdRatioBasedSampler(0.5), 0.5],
    ['traceidratio', 0.001, new TraceIdRatioBasedSampler(0.001), 0.001],
    ['traceidratio', 0, new TraceIdRatioBasedSampler(0), 0],
    ['parentbased_traceidratio', 1, new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(1) }), 1],
    ['parentbased_always_on', 1, new ParentBasedSampler({ root: new AlwaysOnSampler() }), 1],
    ['always_off', 1, new AlwaysOffSampler(), 0],
    ['parentbased_always_off', 1, new ParentBasedSampler({ root: new AlwaysOffSampler() }), 0]
  ]
  for (const [name, ratio, sampler, share] of cases) {
    const bytes = new SpanTracer(sampler, () => {}, new RandomIds(sameBytes()), rootBound(name, ratio))
    const asked = new SpanTracer(sampler, () => {}, new RandomIds(sameBytes()))
    let kept = 0
    let differ = 0
    for (let i = 0; i < DRAWS; i++) {
      const id = bytes.newTrace('GET', SpanKind.SERVER)
      if (id !== asked.newTrace('GET', SpanKind.SERVER)) differ++
      if (id !== undefined) kept++
    }
    t.equal(differ, 0, `${name} ${ratio}: the same trace kept, with the same id, as when the sampler is asked`)
    // Binomial(20,000, share): within five standard deviations.
    t.ok(Math.abs(kept - DRAWS * share) <= 5 * Math.sqrt(DRAWS * share * (1 - share)), `${name} ${ratio}: ${kept} of ${DRAWS} kept`)
  }
})
