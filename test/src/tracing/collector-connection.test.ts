import { once } from 'node:events'
import { createServer, type Socket } from 'node:net'
import { gunzipSync } from 'node:zlib'
import { OTLPExporterError } from '@opentelemetry/otlp-exporter-base'
import t, { type Test } from 'tap'
import { CollectorConnection } from '../../../src/tracing/collector-connection.js'

interface Received { head: string, body: Buffer, connection: number }
// What the collector does with a request: an answer to write (and then, with `close`, close the connection),
// or 'hang' (nothing), 'close' (the connection, unanswered), 'reset' (the same with a TCP reset).
type Answer = string | { write: string, close: true } | 'hang' | 'close' | 'reset'

/** A collector on 127.0.0.1 that reads each request off the wire and does with it what `answer` says. */
async function collector (t: Test, answer: (request: Received, index: number) => Answer) {
  const received: Received[] = []
  const sockets: Socket[] = []
  const server = createServer((socket) => {
    const connection = sockets.push(socket)
    let buffered = Buffer.alloc(0)
    socket.on('error', () => {})
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk])
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n')
        if (end === -1) return
        const head = buffered.toString('latin1', 0, end)
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1])
        if (buffered.length < end + 4 + length) return
        const request = { head, body: buffered.subarray(end + 4, end + 4 + length), connection }
        buffered = buffered.subarray(end + 4 + length)
        received.push(request)
        const what = answer(request, received.length - 1)
        if (what === 'close') socket.destroy()
        else if (what === 'reset') socket.resetAndDestroy()
        else if (typeof what === 'object') socket.end(what.write, 'latin1')
        else if (what !== 'hang') socket.write(what, 'latin1')
      }
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => {
    for (const socket of sockets) socket.destroy()
    return new Promise((resolve) => server.close(resolve))
  })
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1/traces?tenant=a`
  return { url, received, sockets }
}

const OK = 'HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n'
const BYTES = Uint8Array.from({ length: 256 }, (_, i) => i)

function connecting (t: Test, url: string, options: { headers?: Record<string, string>, compression?: 'gzip' | 'none' } = {}) {
  const connection = new CollectorConnection({ url, headers: async () => options.headers ?? { 'Content-Type': 'application/x-protobuf' }, compression: options.compression ?? 'none' })
  t.teardown(() => connection.shutdown())
  return connection
}

t.test('each export on the one kept-alive connection, its bytes exact, with the configured headers', async (t) => {
  const { url, received } = await collector(t, () => OK)
  const connection = connecting(t, url, { headers: { 'Content-Type': 'application/x-protobuf', 'x-collector-key': 'secret one' } })
  for (let i = 0; i < 3; i++) t.same(await connection.send(BYTES.subarray(i), 1000), { status: 'success', data: Buffer.alloc(0) })
  t.same(received.map((request) => request.connection), [1, 1, 1], 'one connection')
  t.same(received.map((request) => request.body), [Buffer.from(BYTES), Buffer.from(BYTES.subarray(1)), Buffer.from(BYTES.subarray(2))], 'every byte as it was')
  const [requestLine, ...headers] = received[0].head.split('\r\n')
  t.equal(requestLine, 'POST /v1/traces?tenant=a HTTP/1.1')
  t.same(headers.sort(), [`Host: ${new URL(url).host}`, 'Content-Type: application/x-protobuf', 'x-collector-key: secret one', 'User-Agent: plant-store', 'Content-Length: 256'].sort())
})

t.test('gzip when OTEL_EXPORTER_OTLP_COMPRESSION says so', async (t) => {
  const { url, received } = await collector(t, () => OK)
  t.equal((await connecting(t, url, { compression: 'gzip' }).send(BYTES, 1000)).status, 'success')
  t.match(received[0].head, /\r\nContent-Encoding: gzip\r\n/)
  t.same(gunzipSync(received[0].body), Buffer.from(BYTES))
})

t.test('a header that would break the request is refused before anything is sent', async (t) => {
  const { url, received } = await collector(t, () => OK)
  await t.rejects(connecting(t, url, { headers: { 'x-key': 'a\r\nx-injected: 1' } }).send(BYTES, 1000), { code: 'ERR_INVALID_CHAR' })
  await t.rejects(connecting(t, url, { headers: { 'x key': 'a' } }).send(BYTES, 1000), { code: 'ERR_INVALID_HTTP_TOKEN' })
  t.equal(received.length, 0)
})

t.test('a connection the collector closed is replaced, idle or just as an export went out', async (t) => {
  const { url, received, sockets } = await collector(t, (request, index) => index === 2 ? 'close' : index === 4 ? 'reset' : OK)
  const connection = connecting(t, url)
  t.equal((await connection.send(BYTES, 1000)).status, 'success')
  // Closed while idle: the next export opens another.
  sockets[0].destroy()
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.equal((await connection.send(BYTES, 1000)).status, 'success')
  // Closed as the third went out, unanswered: sent again at once, on a new connection.
  const started = Date.now()
  t.equal((await connection.send(BYTES, 1000)).status, 'success')
  t.ok(Date.now() - started < 500, 'with no back-off')
  // Reset as the fourth went out: the same.
  t.equal((await connection.send(BYTES, 1000)).status, 'success')
  t.same(received.map((request) => request.connection), [1, 2, 2, 3, 3, 4])
})

t.test('a collector that refuses: its status and reason, no retry', async (t) => {
  const { url, received } = await collector(t, () => 'HTTP/1.1 400 Bad Request\r\nContent-Length: 11\r\n\r\nbad payload')
  const result = await connecting(t, url).send(BYTES, 1000)
  t.equal(result.status, 'failure')
  const error = (result as { error: OTLPExporterError }).error
  t.ok(error instanceof OTLPExporterError)
  t.match(error, { message: 'Bad Request', code: 400, data: 'bad payload' })
  t.equal(received.length, 1)
})

t.test('a busy collector is asked again when Retry-After says, six times at most, never past the deadline', async (t) => {
  const busy = (after: string) => `HTTP/1.1 503 Service Unavailable\r\nRetry-After: ${after}\r\nContent-Length: 0\r\n\r\n`
  const again = await collector(t, (request, index) => index < 2 ? busy('0') : OK)
  t.equal((await connecting(t, again.url).send(BYTES, 1000)).status, 'success')
  t.equal(again.received.length, 3, 'the third attempt is taken')

  const always = await collector(t, () => 'HTTP/1.1 429 Too Many Requests\r\nRetry-After: 0\r\nContent-Length: 0\r\n\r\n')
  t.same(await connecting(t, always.url).send(BYTES, 1000), { status: 'retryable', retryInMillis: 0 })
  t.equal(always.received.length, 6, 'six attempts')

  const later = await collector(t, () => busy('2'))
  const started = Date.now()
  t.same(await connecting(t, later.url).send(BYTES, 1000), { status: 'retryable', retryInMillis: 2000 })
  t.equal(later.received.length, 1, 'not asked again after the deadline')
  t.ok(Date.now() - started < 500, 'nor waited for')
})

t.test('without Retry-After, after a back-off of about a second', async (t) => {
  const { url, received } = await collector(t, (request, index) => index === 0 ? 'HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n' : OK)
  const started = Date.now()
  t.equal((await connecting(t, url).send(BYTES, 3000)).status, 'success')
  const waited = Date.now() - started
  t.ok(waited >= 800 && waited < 2000, `waited ${waited} ms`)
  t.same(received.map((request) => request.connection), [1, 2], 'on a new connection: the first answer said close')
})

t.test('no answer within the deadline, a connection closed unanswered, nothing listening: each worth another attempt', async (t) => {
  const silent = await collector(t, () => 'hang')
  const started = Date.now()
  t.match(await connecting(t, silent.url).send(BYTES, 300), { status: 'retryable', error: { message: 'Request timed out' } })
  t.ok(Date.now() - started < 1000)

  const closing = await collector(t, () => 'close')
  t.match(await connecting(t, closing.url).send(BYTES, 300), { status: 'retryable', error: { message: 'the collector closed the connection before it answered' } })

  const cut = await collector(t, () => 'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{')
  const connection = connecting(t, cut.url)
  const answer = connection.send(BYTES, 300)
  // Half an answer, then the connection goes: the reset is the error.
  await new Promise((resolve) => setTimeout(resolve, 50))
  cut.sockets[0].resetAndDestroy()
  t.match(await answer, { status: 'retryable', error: { code: 'ECONNRESET' } })

  // A port that was just free: nothing listens there.
  const free = createServer().listen(0, '127.0.0.1')
  await once(free, 'listening')
  const unused = (free.address() as { port: number }).port
  await new Promise((resolve) => free.close(resolve))
  t.match(await connecting(t, `http://127.0.0.1:${unused}/v1/traces`).send(BYTES, 300), { status: 'retryable', error: { code: 'ECONNREFUSED' } })
})

t.test('an answer it cannot read fails the export and the connection', async (t) => {
  const { url, received } = await collector(t, (request, index) => index === 0 ? 'HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n' : OK)
  const connection = connecting(t, url)
  t.match(await connection.send(BYTES, 1000), { status: 'failure', error: { message: 'the collector answered with a length it cannot be read' } })
  t.equal((await connection.send(BYTES, 1000)).status, 'success')
  t.same(received.map((request) => request.connection), [1, 2])
})

t.test('an answer before the whole export was written: the connection is not used again', async (t) => {
  // A collector that refuses as soon as it has the head, and never reads the body.
  const sockets: Socket[] = []
  const server = createServer((socket) => {
    sockets.push(socket)
    socket.pause()
    socket.once('readable', () => { socket.write('HTTP/1.1 413 Payload Too Large\r\nContent-Length: 0\r\n\r\n') })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => {
    for (const socket of sockets) socket.destroy()
    return new Promise((resolve) => server.close(resolve))
  })
  const connection = connecting(t, `http://127.0.0.1:${(server.address() as { port: number }).port}/v1/traces`)
  // Far more than the socket buffers take at once.
  const big = new Uint8Array(64 * 1024 * 1024)
  t.match(await connection.send(big, 5000), { status: 'failure', error: { code: 413 } })
  t.match(await connection.send(BYTES, 5000), { status: 'failure', error: { code: 413 } })
  t.equal(sockets.length, 2, 'the second export on a connection of its own')
})

t.test('shutdown closes the connection; an export under way ends at once and is not sent again', async (t) => {
  const { url, sockets, received } = await collector(t, (request, index) => index === 0 ? OK : 'hang')
  const connection = connecting(t, url)
  await connection.send(BYTES, 1000)
  const answer = connection.send(BYTES, 5000)
  await new Promise((resolve) => setTimeout(resolve, 50))
  const closed = once(sockets[0], 'close')
  const started = Date.now()
  connection.shutdown()
  await closed
  t.pass('the collector saw it close')
  t.match(await answer, { status: 'retryable', error: { message: 'the collector closed the connection before it answered' } })
  t.ok(Date.now() - started < 500, 'at once')
  t.equal(received.length, 2, 'not sent again')
  t.equal(sockets.length, 1, 'on no other connection')
})

t.test('an answer whose body runs to the connection\'s end', async (t) => {
  const { url } = await collector(t, () => ({ write: 'HTTP/1.1 200 OK\r\n\r\n{"partialSuccess":{}}', close: true }))
  t.same(await connecting(t, url).send(BYTES, 1000), { status: 'success', data: Buffer.from('{"partialSuccess":{}}') })
})
