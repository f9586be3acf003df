import { createTraceState, SpanKind, TraceFlags, type SpanContext } from '@opentelemetry/api'
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer'
import { AlwaysOnSampler } from '@opentelemetry/sdk-trace'
import t from 'tap'
import { JsonSpans, ProtobufSpans, unixNanos } from '../../../src/tracing/otlp-encode.js'
import { SpanTracer, type RecordedSpan } from '../../../src/tracing/spans.js'

// The package's serializers read the SDK's span shape: the same spans, as the SDK would hold them.
const hrTime = (time: number): [number, number] => {
  const nanos = unixNanos(time)
  return [Number(nanos / 1_000_000_000n), Number(nanos % 1_000_000_000n)]
}
const resource = { attributes: { 'service.name': 'plant-store-test' } }
const scope = { name: 'plant-store' }
const readable = (span: RecordedSpan) => ({
  name: span.name,
  kind: span.kind,
  spanContext: () => span.spanContext(),
  parentSpanContext: span.parent,
  startTime: hrTime(span.startTime),
  endTime: hrTime(span.endTime),
  status: span.status,
  attributes: span.attributes,
  links: span.links,
  events: [],
  resource,
  instrumentationScope: scope,
  droppedAttributesCount: 0,
  droppedEventsCount: 0,
  droppedLinksCount: 0
})

// Every shape this service gives a span, and the edges of the encoding: lengths past one and two
// bytes, UTF-8, a caller's tracestate, every kind of value.
function spans (): RecordedSpan[] {
  const ended: RecordedSpan[] = []
  const tracer = new SpanTracer(new AlwaysOnSampler(), (span) => { ended.push(span) })
  const caller: SpanContext = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED, isRemote: true, traceState: createTraceState('vendor=a1,other=b2') }
  const request = tracer.start('POST /plants', SpanKind.SERVER, {
    'http.request.method': 'POST', 'url.path': '/plants', 'url.scheme': 'http', 'server.address': 'plants.example', 'server.port': 3000, 'http.route': '/plants'
  }, caller.traceId, caller)
  const own = tracer.startSpan('GET /plants/:id', SpanKind.SERVER, { 'url.path': `/plants/${'9'.repeat(200)}`, 'server.port': 443 }) as RecordedSpan
  const links = Array.from({ length: 600 }, (_, i) => ({ context: i === 0 ? request.spanContext() : { ...own.spanContext(), spanId: tracer.ids.spanId() } }))
  const batch = tracer.startSpan('store commit', SpanKind.CLIENT, { 'db.system.name': 'sqlite', 'db.operation.name': 'COMMIT', 'db.operation.batch.size': 600 }, request.spanContext(), links) as RecordedSpan
  batch.end()
  request.setAttribute('http.response.status_code', 503)
  request.setAttribute('error.type', 'StoreUnavailableError')
  request.setStatus({ code: 2, message: 'the store did not answer in 5000 ms — é, 植物' })
  request.end()
  own.setAttribute('http.response.status_code', 200)
  own.setAttribute('odd values', -42)
  own.setAttribute('a double', 0.25)
  own.setAttribute('a flag', true)
  own.setAttribute('another', false)
  own.setAttribute('plant name', 'Monstera délicieuse 🌿')
  own.end()
  own.setAttribute('after the end', 'ignored')
  own.setStatus({ code: 2 })
  own.end()
  const webhook = tracer.startSpan('webhook attempt', SpanKind.CLIENT, { 'plant_store.webhook.attempt': 2 }) as RecordedSpan
  webhook.end()
  return ended
}

t.test('protobuf: the bytes @opentelemetry/otlp-transformer writes for the same spans', async (t) => {
  const ended = spans()
  t.equal(ended.length, 4, 'a span ended twice is recorded once')
  t.equal(ended[2].status.code, 0, 'and changes no more after its end')
  t.notOk('after the end' in ended[2].attributes)
  const batch = new ProtobufSpans()
  for (const span of ended) batch.add(span)
  t.equal(batch.count, 4)
  const ours = Buffer.from(batch.request('plant-store-test', 'plant-store'))
  const theirs = Buffer.from(ProtobufTraceSerializer.serializeRequest(ended.map(readable) as never) as Uint8Array)
  t.ok(ours.length > 16_384 + 200, `${ours.length} bytes: the batch span's length takes three bytes`)
  t.ok(ours.equals(theirs), 'byte for byte')

  // One span alone, and the buffer grown from its first size.
  const one = new ProtobufSpans(16)
  one.add(ended[2])
  t.ok(Buffer.from(one.request('plant-store-test', 'plant-store')).equals(Buffer.from(ProtobufTraceSerializer.serializeRequest([readable(ended[2])] as never) as Uint8Array)))
})

t.test('a batch emptied after its export encodes the next spans as a new one would, in the buffer it already has', async (t) => {
  const ended = spans()
  // One resource object for all of them: the serializer groups spans by it.
  const theirs = (some: RecordedSpan[], serviceName = 'plant-store-test') => {
    const own = { attributes: { 'service.name': serviceName } }
    return Buffer.from(ProtobufTraceSerializer.serializeRequest(some.map((span) => ({ ...readable(span), resource: own })) as never) as Uint8Array)
  }
  const batch = new ProtobufSpans()
  for (const span of ended) batch.add(span)
  const first = Buffer.from(batch.request('plant-store-test', 'plant-store'))
  t.ok(first.equals(theirs(ended)))
  const buffer = batch.buffer
  batch.reset()
  t.equal(batch.count, 0)
  batch.add(ended[1])
  t.ok(Buffer.from(batch.request('plant-store-test', 'plant-store')).equals(theirs([ended[1]])), 'only the spans added since')
  t.equal(batch.buffer, buffer, 'not allocated again')

  // A head longer than the room kept for it before the spans: written apart, then joined.
  const long = 'plant-store-'.repeat(30)
  batch.reset()
  batch.add(ended[3])
  t.ok(Buffer.from(batch.request(long, 'plant-store')).equals(theirs([ended[3]], long)), 'a service name of 330 characters')

  // A buffer grown past 1 MiB (batches of spans with a thousand links) is not kept for the next export.
  batch.reset()
  while (batch.buffer.length <= 1024 * 1024) batch.add(ended[0])
  batch.reset()
  t.equal(batch.buffer.length, 64 * 1024, 'back to its first size')
  batch.add(ended[1])
  t.ok(Buffer.from(batch.request('plant-store-test', 'plant-store')).equals(theirs([ended[1]])))

  const json = new JsonSpans()
  json.add(ended[0])
  json.reset()
  json.add(ended[1])
  t.equal(JSON.parse(Buffer.from(json.request('plant-store-test', 'plant-store')).toString()).resourceSpans[0].scopeSpans[0].spans.length, 1)
})

t.test('JSON: what @opentelemetry/otlp-transformer writes for the same spans', async (t) => {
  const ended = spans()
  const batch = new JsonSpans()
  for (const span of ended) batch.add(span)
  const ours = JSON.parse(Buffer.from(batch.request('plant-store-test', 'plant-store')).toString())
  const theirs = JSON.parse(Buffer.from(JsonTraceSerializer.serializeRequest(ended.map(readable) as never) as Uint8Array).toString())
  t.strictSame(ours, theirs)
  t.equal(ours.resourceSpans[0].scopeSpans[0].spans.length, 4)
})

t.test('span times: nanoseconds since the epoch, as exact as performance.now()', async (t) => {
  const now = performance.now()
  const nanos = unixNanos(now)
  const wall = BigInt(Date.now()) * 1_000_000n
  t.ok(nanos > wall - 50_000_000n && nanos < wall + 50_000_000n, 'the wall clock\'s time, within 50 ms')
  t.equal(unixNanos(now + 0.000_001) - nanos, 1n, 'one nanosecond apart')
})
