import { once } from 'node:events'
import { createServer, type AddressInfo, type Socket } from 'node:net'
import { gunzipSync } from 'node:zlib'
import { SpanKind } from '@opentelemetry/api'
import { AlwaysOnSampler } from '@opentelemetry/sdk-trace'
import t, { type Test } from 'tap'
import { SpanExport, type SpanExportOptions } from '../../../src/tracing/export.js'
import { SpanTracer } from '../../../src/tracing/spans.js'
import { otlpReceiver } from '../../helpers/otlp.js'

type Line = { level: 'warn' | 'info', fields: Record<string, unknown>, msg: string }

// An exporter to `url`, the warnings it logs, and a tracer whose spans go to it.
function exporting (t: Test, options: Partial<SpanExportOptions> & { url: string }) {
  const lines: Line[] = []
  const at = (level: Line['level']) => (fields: unknown, msg?: string) => { lines.push({ level, fields: fields as Record<string, unknown>, msg: msg ?? '' }) }
  const exporter = new SpanExport({ protocol: 'http/json', serviceName: 'test', log: { warn: at('warn'), info: at('info') }, ...options })
  const tracer = new SpanTracer(new AlwaysOnSampler(), exporter.record)
  const spans = (count: number, from = 0) => {
    for (let i = from; i < from + count; i++) tracer.startSpan(`span ${i}`, SpanKind.INTERNAL, { i })?.end()
  }
  return { exporter, spans, lines }
}

// Sets an environment variable the exporter reads for the test, and puts back what was there after it.
function setEnv (t: Test, name: string, value: string): void {
  const before = process.env[name]
  process.env[name] = value
  t.teardown(() => {
    if (before === undefined) delete process.env[name]
    else process.env[name] = before
  })
}

// Waits for `done` to hold, looking every 5 ms; fails the test after 5 s.
async function until (t: Test, done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within 5 s`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  t.pass(what)
}

t.test('full batches go at once, one export at a time; the rest when the delay runs out or at close', async (t) => {
  const receiver = await otlpReceiver(t)
  const { exporter, spans } = exporting(t, { url: `${receiver.url}/v1/traces`, batchSize: 4, delay: 100 })
  const recorded = performance.now()
  spans(9)
  // Two full batches: the first is on its way, the second waits for it; the ninth waits for the delay.
  await until(t, () => receiver.spans.length === 9, 'the nine spans arrive')
  t.same(receiver.spans.map((span) => span.name), Array.from({ length: 9 }, (_, i) => `span ${i}`))
  t.equal(receiver.requests.length, 3)
  t.ok(receiver.requests[2].at - recorded >= 100, 'the ninth only once the delay ran out')
  spans(2, 9)
  await exporter.close()
  t.equal(receiver.spans.length, 11, 'close sends the rest at once')
  t.equal(receiver.requests.length, 4)
  t.equal(receiver.requests[0].headers['content-type'], 'application/json')
})

t.test('spans past the queue are dropped and said so; nothing waits without end', async (t) => {
  const receiver = await otlpReceiver(t)
  const { exporter, spans, lines } = exporting(t, { url: `${receiver.url.replace('//', '//token@')}/v1/traces`, batchSize: 2, maxQueue: 3 })
  // In one turn: two go in a batch that is sent, one waits, and seven find the queue full.
  spans(10)
  await exporter.close()
  t.same(receiver.spans.map((span) => span.name), ['span 0', 'span 1', 'span 2'])
  t.match(lines, [{ level: 'warn', fields: { dropped: 7, url: `${receiver.url.replace('//', '//[REDACTED]@')}/v1/traces` }, msg: 'trace spans dropped: more than 3 waited for the collector' }])
  t.equal(lines.length, 1)
})

t.test('a collector that refuses: said once until it takes spans again, and the close says it too', async (t) => {
  let status = 400
  const receiver = await otlpReceiver(t, () => status)
  // Credentials in the endpoint's user info: they reach the collector, never the log.
  const { exporter, spans, lines } = exporting(t, { url: `${receiver.url.replace('//', '//user:s%40cret@')}/v1/traces`, batchSize: 1 })
  spans(3)
  await until(t, () => receiver.requests.length === 3 && lines.length > 0, 'each was offered')
  t.equal(receiver.requests[0].headers.authorization, `Basic ${Buffer.from('user:s@cret').toString('base64')}`, 'as HTTP basic authentication')
  t.match(lines, [{ level: 'warn', msg: 'the trace collector did not take the spans: they are lost until it does', fields: { status: 400, reason: 'Bad Request', url: `${receiver.url.replace('//', '//[REDACTED]@')}/v1/traces` } }])
  t.equal(lines.length, 1, 'once for the three')
  status = 200
  spans(1, 3)
  await until(t, () => receiver.requests.length === 4, 'the next is taken')
  status = 400
  spans(1, 4)
  await until(t, () => lines.length === 2, 'and a refusal after it is said again')
  spans(1, 5)
  await t.rejects(exporter.close(), { message: 'Bad Request' }, 'the last spans were refused')
  t.equal(lines.length, 2, 'the close says it itself')
  t.notMatch(JSON.stringify(lines), /user|s%40cret|s@cret/, 'no credential in any line')
})

t.test('the collector gets the headers OTEL_EXPORTER_OTLP_HEADERS names, and gzip when OTEL_EXPORTER_OTLP_COMPRESSION says so', async (t) => {
  const receiver = await otlpReceiver(t)
  setEnv(t, 'OTEL_EXPORTER_OTLP_HEADERS', 'x-collector-key=secret%20one')
  setEnv(t, 'OTEL_EXPORTER_OTLP_COMPRESSION', 'gzip')
  const { exporter, spans } = exporting(t, { url: `${receiver.url}/v1/traces` })
  spans(2)
  await exporter.close()
  t.equal(receiver.requests.length, 1)
  t.equal(receiver.requests[0].headers['x-collector-key'], 'secret one')
  t.equal(receiver.requests[0].headers['content-encoding'], 'gzip')
  t.equal(gunzipSync(receiver.requests[0].body).subarray(0, 1).toString(), '{', 'gzipped JSON')
  t.same(receiver.spans.map((span) => span.name), ['span 0', 'span 1'])
})

t.test('an https: collector is reached over TLS, through @opentelemetry/otlp-exporter-base\'s transport', async (t) => {
  // A plain-HTTP receiver at an https: URL: the TLS handshake fails, so no export arrives as HTTP.
  const receiver = await otlpReceiver(t)
  const { exporter, spans } = exporting(t, { url: `${receiver.url.replace('http:', 'https:')}/v1/traces`, timeout: 1000 })
  spans(1)
  await t.rejects(exporter.close(), { code: 'EPROTO', message: /wrong version number/ }, 'the handshake met plain HTTP')
  t.equal(receiver.requests.length, 0, 'nothing in plain HTTP')
})

// A collector of the test's own that answers each export with `answer`, written on the raw connection.
async function rawCollector (t: Test, answer: (socket: Socket) => void) {
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.on('error', () => {})
    socket.once('data', () => answer(socket))
    socket.on('close', () => sockets.delete(socket))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise((resolve) => {
    for (const socket of sockets) socket.destroy()
    server.close(resolve)
  }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`, open: () => sockets.size }
}

t.test('a collector that trickles its answer, never idle: the export is cut at its timeout, and the close completes', async (t) => {
  const collector = await rawCollector(t, (socket) => {
    socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n')
    const drip = setInterval(() => socket.write('1\r\na\r\n'), 20)
    socket.on('close', () => clearInterval(drip))
  })
  const { exporter, spans } = exporting(t, { url: collector.url, timeout: 300 })
  spans(1)
  const started = performance.now()
  // The transport's own timeout is one of inactivity: this collector is never quiet for long.
  await t.resolves(exporter.close(), 'taken: the answer said 200 before it was cut')
  t.ok(performance.now() - started < 2000, `closed in ${Math.round(performance.now() - started)} ms`)
  t.equal(collector.open(), 0, 'the connection is closed')
})

t.test('what the transport reads of an answer is bounded: a chunk-size line without end, a body without end, informational answers without end', async (t) => {
  const flood = (head: string, piece: Buffer) => (socket: Socket) => {
    socket.write(head)
    const more = (): void => {
      let room = true
      while (room && !socket.destroyed) room = socket.write(piece)
    }
    socket.on('drain', more)
    more()
  }
  for (const [what, head, piece, reason] of [
    ['a chunk-size line without end', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;x=', Buffer.alloc(16 * 1024, 'a'), /Chunk extensions overflow/],
    ['a body without end', 'HTTP/1.1 400 Bad Request\r\nContent-Length: 100000000000\r\n\r\n', Buffer.alloc(16 * 1024), /exceeded size limit/],
    ['informational answers without end', '', Buffer.from('HTTP/1.1 100 Continue\r\n\r\n'.repeat(512)), /^the collector sent more than 8 informational \(1xx\) answers$/]
  ] as const) {
    const collector = await rawCollector(t, flood(head, piece))
    const { exporter, spans } = exporting(t, { url: collector.url, timeout: 10_000 })
    spans(1)
    const started = performance.now()
    await t.rejects(exporter.close(), { message: reason }, `${what}: refused`)
    t.ok(performance.now() - started < 5000, `${what}: at once, not at the export's timeout (${Math.round(performance.now() - started)} ms)`)
  }
})

t.test('a few informational answers before the final one are read past, as HTTP allows', async (t) => {
  const collector = await rawCollector(t, (socket) => {
    socket.end('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n'.repeat(4) + 'HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n')
  })
  const { exporter, spans, lines } = exporting(t, { url: collector.url })
  spans(1)
  await t.resolves(exporter.close(), 'taken')
  t.same(lines, [], 'and nothing to say')
})
