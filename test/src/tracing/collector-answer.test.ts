import t from 'tap'
import { AnswerReader, MAX_BODY, type CollectorAnswer } from '../../../src/tracing/collector-answer.js'

// Feeds `text` to a reader in pieces of `size` bytes; the answer, and the piece (1-based) that completed it.
function read (text: string | Buffer, size = Infinity): { answer?: CollectorAnswer, at?: number, reader: AnswerReader } {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text, 'latin1')
  const reader = new AnswerReader()
  const pieces = Math.ceil(bytes.length / Math.min(size, bytes.length))
  for (let i = 0; i < pieces; i++) {
    const answer = reader.push(bytes.subarray(i * size, (i + 1) * size))
    if (answer !== undefined) return { answer, at: i + 1, reader }
  }
  return { reader }
}

t.test('a body of a length, however the bytes arrive', async (t) => {
  const text = 'HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 5\r\n\r\n\x00\x01\xff\r\n'
  for (const size of [1, 2, 7, text.length]) {
    const { answer, at } = read(text, size)
    t.same(answer, { status: 200, reason: 'OK', retryAfter: undefined, keepAlive: true, body: Buffer.from([0, 1, 255, 13, 10]) }, `in pieces of ${size}`)
    t.equal(at, Math.ceil(text.length / size), 'complete with its last byte, not before')
  }
})

t.test('whether the connection can carry another export', async (t) => {
  const keepAlive = (text: string) => read(text).answer?.keepAlive
  t.equal(keepAlive('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'), true, 'HTTP/1.1: yes')
  t.equal(keepAlive('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n'), false, 'unless it says close')
  t.equal(keepAlive('HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n'), false, 'HTTP/1.0: no')
  t.equal(keepAlive('HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n'), true, 'unless it says keep-alive')
  t.equal(keepAlive('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}HTTP/1.1'), false, 'not after bytes nobody asked for')
  t.equal(keepAlive('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nX'), false, 'nor after a chunked one')
})

t.test('a chunked body, with extensions and trailers, however the bytes arrive', async (t) => {
  const bare = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3;name=value\r\nabc\r\nA\r\n0123456789\r\n0\r\n\r\n'
  const trailers = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\nx-trailer: 1\r\nx-other: 2\r\n\r\n'
  for (const size of [1, 3, 1000]) {
    const one = read(bare, size)
    t.equal(one.answer?.body.toString(), 'abc0123456789', `in pieces of ${size}`)
    t.equal(one.answer?.keepAlive, true)
    t.equal(one.at, Math.ceil(bare.length / size), 'complete with the blank line after the last chunk')
    const two = read(trailers, size)
    t.equal(two.answer?.body.toString(), '{}', `after trailers, in pieces of ${size}`)
    t.equal(two.at, Math.ceil(trailers.length / size))
  }
})

t.test('a body that runs to the connection\'s end', async (t) => {
  const { answer, reader } = read('HTTP/1.1 503 Service Unavailable\r\nRetry-After: 3\r\n\r\nbusy,')
  t.equal(answer, undefined, 'not complete while the connection is open')
  t.equal(reader.push(Buffer.from(' try later')), undefined)
  t.same(reader.end(), { status: 503, reason: 'Service Unavailable', retryAfter: '3', keepAlive: false, body: Buffer.from('busy, try later') }, 'complete at its end')
  t.equal(read('HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n{}').reader.end(), undefined, 'a body of a length cut short is no answer')
  t.equal(read('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n').reader.end(), undefined, 'nor a chunked one')
  t.equal(read('HTTP/1.1 200 OK\r\n').reader.end(), undefined, 'nor half a head')
})

t.test('interim answers are skipped; 204 and 304 have no body', async (t) => {
  t.same(read('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200\r\nContent-Length: 2\r\n\r\n{}', 5).answer, { status: 200, reason: '', retryAfter: undefined, keepAlive: true, body: Buffer.from('{}') })
  t.equal(read('HTTP/1.1 204 No Content\r\n\r\n').answer?.body.length, 0)
  t.equal(read('HTTP/1.1 304 Not Modified\r\n\r\n').answer?.keepAlive, true)
})

t.test('an answer that cannot be read is an error, never a wait without end', async (t) => {
  t.throws(() => read('SSH-2.0-OpenSSH\r\n\r\n'), { message: 'the collector did not answer in HTTP/1.1' })
  t.throws(() => read('HTTP/2 200\r\n\r\n'), { message: 'the collector did not answer in HTTP/1.1' })
  t.throws(() => read('HTTP/1.1 200 OK\r\nno colon\r\n\r\n'), { message: 'the collector answered with a header it cannot be read' })
  t.throws(() => read('HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n'), { message: 'the collector answered with a length it cannot be read' })
  t.throws(() => read('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'), { message: 'the collector answered with a chunk it cannot be read' })
  t.throws(() => read('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}}\r\n'), { message: 'the collector answered with a chunk it cannot be read' })
  t.throws(() => read(`HTTP/1.1 200 OK\r\nx: ${'a'.repeat(70 * 1024)}`), { message: 'the collector answered with a head over 64 KiB' })
})

t.test('a body past 4 MiB is refused as it arrives, as @opentelemetry/otlp-exporter-base refuses it', async (t) => {
  const message = `OTLP export response body exceeded size limit of ${MAX_BODY} bytes`
  t.equal(MAX_BODY, 4 * 1024 * 1024)
  const head = Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: ${MAX_BODY + 1}\r\n\r\n`)
  t.throws(() => read(Buffer.concat([head, Buffer.alloc(MAX_BODY + 1)]), 1024 * 1024), { message })
  t.equal(read(Buffer.concat([head, Buffer.alloc(MAX_BODY)])).answer, undefined, 'up to the limit it is read')
  const endless = read('HTTP/1.1 200 OK\r\n\r\n').reader
  t.throws(() => { for (let i = 0; i < 5; i++) endless.push(Buffer.alloc(1024 * 1024)) }, { message }, 'and a body to the connection\'s end')
})
