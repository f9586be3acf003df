import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import t, { type Test } from 'tap'
import { build } from '../helpers/build.js'

/** A listening app and a raw connection to it; `answer` resolves with all it sent once it closes. */
async function connection (t: Test, env: Record<string, string>): Promise<{ socket: Socket, answer: Promise<string>, start: number }> {
  const app = await build(t, env)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const socket = connect((app.server.address() as { port: number }).port, '127.0.0.1')
  t.teardown(() => { socket.destroy() })
  await once(socket, 'connect')
  socket.on('error', () => {})
  // Without the server's timeouts the test fails in 5 s rather than hang.
  const guard = setTimeout(() => socket.destroy(), 5000)
  socket.once('close', () => clearTimeout(guard))
  let data = ''
  socket.on('data', (chunk) => { data += chunk })
  const answer = once(socket, 'close').then(() => data)
  return { socket, answer, start: Date.now() }
}

/** Writes `text` one byte every 50 ms until the socket is closed. */
function trickle (socket: Socket, text: string): void {
  let i = 0
  const timer = setInterval(() => {
    if (socket.destroyed || !socket.writable) return clearInterval(timer)
    socket.write(text[i % text.length])
    i++
  }, 50)
  socket.once('close', () => clearInterval(timer))
}

t.test('headers sent one byte at a time: cut off after HEADERS_TIMEOUT with a 408', async (t) => {
  const { socket, answer, start } = await connection(t, { HEADERS_TIMEOUT: '500', REQUEST_TIMEOUT: '5000' })
  trickle(socket, `GET /health HTTP/1.1\r\nHost: localhost\r\nX-Slow: ${'a'.repeat(10_000)}`)
  const text = await answer
  const elapsed = Date.now() - start
  t.match(text, /^HTTP\/1.1 408 Request Timeout\r\n/)
  t.match(text, /\r\n\r\n{"error":408,"message":"The request took too long to arrive."}$/)
  t.ok(elapsed >= 450 && elapsed < 3000, `cut off after ${elapsed} ms`)
})

t.test('a body sent one byte at a time: cut off after REQUEST_TIMEOUT with a 408', async (t) => {
  const { socket, answer, start } = await connection(t, { HEADERS_TIMEOUT: '500', REQUEST_TIMEOUT: '1000' })
  socket.write('POST /plants HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer test-token-for-plants\r\n' +
    'Content-Type: application/json\r\nContent-Length: 10000\r\n\r\n')
  trickle(socket, ' ')
  const text = await answer
  const elapsed = Date.now() - start
  t.match(text, /^HTTP\/1.1 408 Request Timeout\r\n/)
  t.ok(elapsed >= 950 && elapsed < 3500, `cut off after ${elapsed} ms`)
})

t.test('an idle keep-alive connection is closed after KEEP_ALIVE_TIMEOUT', async (t) => {
  const { socket, answer, start } = await connection(t, { KEEP_ALIVE_TIMEOUT: '500' })
  socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n')
  const text = await answer
  const elapsed = Date.now() - start
  t.match(text, /^HTTP\/1.1 200 OK\r\n[^]*\r\n\r\n{"status":"ok"}$/)
  t.match(text, /\r\nKeep-Alive: timeout=\d+\r\n/)
  t.ok(elapsed >= 450 && elapsed < 2500, `closed after ${elapsed} ms`)
})
