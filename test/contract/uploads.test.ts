import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { MAX_NAME_LENGTH, MAX_TAG_LENGTH, PLANT_BODY_LIMIT } from '../../schemas/index.js'
import { AUTH, build } from '../helpers/build.js'
import { bearer, scopedTokensFile } from '../helpers/scopes.js'

async function open (app: FastifyInstance): Promise<{ socket: Socket, answer: () => string }> {
  const socket = connect((app.server.address() as { port: number }).port, '127.0.0.1')
  socket.on('error', () => {})
  await once(socket, 'connect')
  let answer = ''
  socket.on('data', (chunk) => { answer += chunk.toString('latin1') })
  return { socket, answer: () => answer }
}

const until = async (check: () => boolean, ms: number): Promise<void> => {
  for (const end = Date.now() + ms; !check() && Date.now() < end;) await new Promise((resolve) => setTimeout(resolve, 10))
}

t.test('an unauthenticated upload: 401, Connection: close, and the server stops reading', async (t) => {
  const app = await build(t, { BODY_LIMIT: String(2 ** 30) })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { socket, answer } = await open(app)
  const length = 512 * 2 ** 20
  socket.write(`POST /plants HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`)
  // Send as fast as the server takes it, for at most 10 s or until the connection ends.
  const chunk = Buffer.alloc(256 * 1024, 0x20)
  const end = Date.now() + 10_000
  while (socket.bytesWritten < length && !socket.destroyed && Date.now() < end) {
    if (!socket.write(chunk)) {
      await new Promise((resolve) => {
        for (const event of ['drain', 'close', 'error']) socket.once(event, resolve)
        setTimeout(resolve, 500)
      })
    }
  }
  await until(() => socket.destroyed || socket.readableEnded, 5000)
  t.match(answer(), /^HTTP\/1.1 401 Unauthorized\r\n/)
  t.match(answer(), /\r\nconnection: close\r\n/i)
  t.ok(socket.readableEnded || socket.destroyed, 'the server closed the connection')
  // What the kernel's socket buffers hold is not read by the service; anything near the length is.
  t.ok(socket.bytesWritten < 64 * 2 ** 20, `sent ${Math.round(socket.bytesWritten / 2 ** 20)} MiB of ${length / 2 ** 20} before the server closed`)
  socket.destroy()
})

t.test('Expect: 100-continue: a client without a token gets its 401 without being asked for the body', async (t) => {
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { socket, answer } = await open(app)
  socket.write('POST /plants HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 22\r\nExpect: 100-continue\r\n\r\n')
  await until(() => answer().includes('\r\n\r\n'), 5000)
  t.match(answer(), /^HTTP\/1.1 401 Unauthorized\r\n/, 'the first answer is the 401, not 100 Continue')
  t.match(answer(), /\r\nconnection: close\r\n/i)
  await until(() => socket.readableEnded, 5000)
  t.ok(socket.readableEnded, 'the connection is closed')
  socket.destroy()
})

t.test('Expect: 100-continue: a token without the scope gets its 403 without being asked for the body', async (t) => {
  const app = await build(t, { API_TOKENS_FILE: scopedTokensFile(t) })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { socket, answer } = await open(app)
  socket.write(`POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: ${bearer('plants:read').authorization}\r\nContent-Type: application/json\r\n` +
    'Content-Length: 22\r\nExpect: 100-continue\r\n\r\n')
  await until(() => answer().includes('\r\n\r\n'), 5000)
  t.match(answer(), /^HTTP\/1.1 403 Forbidden\r\n/, 'the first answer is the 403, not 100 Continue')
  t.match(answer(), /\r\nwww-authenticate: Bearer realm="plant-store", error="insufficient_scope", scope="plants:write"\r\n/i)
  t.match(answer(), /\r\nconnection: close\r\n/i)
  await until(() => socket.readableEnded, 5000)
  t.ok(socket.readableEnded, 'the connection is closed')
  socket.destroy()
})

t.test('Expect: 100-continue with a good token: 100 Continue, then the body, then 200', async (t) => {
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { socket, answer } = await open(app)
  const body = '{"id":1,"name":"Fern"}'
  socket.write(`POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH.authorization}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${body.length}\r\nExpect: 100-Continue\r\n\r\n`)
  await until(() => answer().includes('\r\n\r\n'), 5000)
  t.equal(answer(), 'HTTP/1.1 100 Continue\r\n\r\n')
  socket.write(body)
  await until(() => answer().endsWith('{"name":"Fern"}'), 5000)
  t.match(answer(), /^HTTP\/1.1 100 Continue\r\n\r\nHTTP\/1.1 200 OK\r\n/)
  socket.destroy()
})

t.test('the largest valid plant, every character escaped, fits the plant write limit with room to spare', async (t) => {
  const app = await build(t)
  // Each code point beyond U+FFFF, written as its two \uXXXX escapes: twelve bytes.
  const escaped = (count: number, from: number) => Array.from({ length: count }, (_, i) => {
    const pair = String.fromCodePoint(0x1f300 + from + i)
    return `\\u${pair.charCodeAt(0).toString(16)}\\u${pair.charCodeAt(1).toString(16)}`
  }).join('')
  const body = `{"id":-9223372036854775808,"name":"${escaped(MAX_NAME_LENGTH, 0)}","tag":"${escaped(MAX_TAG_LENGTH, 0)}"}`
  t.ok(Buffer.byteLength(body) * 1.5 < PLANT_BODY_LIMIT, `${Buffer.byteLength(body)} bytes, within two thirds of ${PLANT_BODY_LIMIT}`)
  const res = await app.inject({ method: 'POST', url: '/plants', headers: { ...AUTH, 'content-type': 'application/json' }, payload: body })
  t.equal(res.statusCode, 200)
  t.same(res.json(), JSON.parse(body, (key, value) => key === 'id' ? undefined : value))
})

t.test('a plant write larger than that: 413 from its Content-Length, before the body is read, and the connection closed', async (t) => {
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  for (const [method, path, type] of [['POST', '/plants', 'application/json'], ['PATCH', '/plants/1', 'application/merge-patch+json']]) {
    const { socket, answer } = await open(app)
    // The headers alone: the answer must not wait for a body.
    socket.write(`${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH.authorization}\r\nContent-Type: ${type}\r\nContent-Length: ${PLANT_BODY_LIMIT + 1}\r\n\r\n`)
    await until(() => socket.readableEnded, 5000)
    t.match(answer(), /^HTTP\/1.1 413 Payload Too Large\r\n/, method)
    t.match(answer(), /\r\nconnection: close\r\n/i)
    t.match(answer(), new RegExp(`\\{"error":413,"message":"The request body is larger than the limit of ${PLANT_BODY_LIMIT} bytes\\."\\}$`))
    t.ok(socket.readableEnded, 'the connection is closed')
    socket.destroy()
  }
})
