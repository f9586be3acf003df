import { once } from 'node:events'
import { connect } from 'node:net'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { bounded } from '../helpers/bounded.js'
import { assertError, AUTH, build, getPlant } from '../helpers/build.js'

/** How long the app may take to answer on a connection and close it: many times what it takes. */
const CLOSE_MS = 15_000

/** Sends raw bytes to a listening app and returns the whole answer, once it closes the connection (within CLOSE_MS). */
async function raw (app: FastifyInstance, request: string): Promise<string> {
  const address = app.server.address() as { port: number }
  const socket = connect(address.port, '127.0.0.1', () => socket.end(request))
  let answer = ''
  const closed = new Promise<string>((resolve, reject) => {
    socket.on('data', (chunk) => { answer += chunk.toString() })
    socket.on('close', () => resolve(answer))
    socket.on('error', reject)
  })
  try {
    return await bounded(closed, CLOSE_MS, 'the app closing the connection', () => `received: ${JSON.stringify(answer)}`)
  } catch (error) {
    socket.destroy()
    throw error
  }
}

function errorBodyOf (answer: string): unknown {
  return JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))
}

t.test('unknown routes and methods: 404 with the Error body', async (t) => {
  const app = await build(t)
  assertError(t, await app.inject('/nope'), 404, /GET \/nope/)
  assertError(t, await app.inject({ method: 'DELETE', url: '/plants', headers: AUTH }), 404, /DELETE \/plants/)
  assertError(t, await app.inject({ method: 'PUT', url: '/plants/1', headers: AUTH }), 404)
  assertError(t, await app.inject({ method: 'PATCH', url: '/plants', headers: AUTH }), 404, /PATCH \/plants/)
  assertError(t, await app.inject({ method: 'POST', url: '/plants/1', headers: AUTH }), 404)
  assertError(t, await app.inject({ method: 'GET', url: '/plants/1/leaves', headers: AUTH }), 404)
})

t.test('errors Fastify raises before a route runs keep the Error body', async (t) => {
  const app = await build(t)
  assertError(t, await app.inject({ method: 'GET', url: '/plants/%zz', headers: AUTH }), 400, /malformed/)
  assertError(t, await getPlant(app, '1'.repeat(101)), 400, /params\/id must be an integer/)
  assertError(t, await getPlant(app, '1'.repeat(1537)), 400, /path parameter/)
  const res = await app.inject({ method: 'POST', url: '/plants', headers: { ...AUTH, 'content-type': 'application/json', 'content-length': '50' }, payload: '{"id":1,"name":"x"}' })
  assertError(t, res, 400, /Content-Length/)
})

t.test('errors from the HTTP parser keep the Error body', async (t) => {
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const badLength = await raw(app, 'POST /plants HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n')
  t.match(badLength, /^HTTP\/1.1 400 Bad Request\r\n/)
  t.match(badLength, /Content-Type: application\/json; charset=utf-8/)
  t.same(errorBodyOf(badLength), { error: 400, message: 'The request is not valid HTTP/1.1.' })
  const garbage = await raw(app, 'HELLO\r\n\r\n')
  t.same(errorBodyOf(garbage), { error: 400, message: 'The request is not valid HTTP/1.1.' })
  const huge = await raw(app, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)
  t.match(huge, /^HTTP\/1.1 431 /)
  t.same(errorBodyOf(huge), { error: 431, message: 'The request headers are larger than the service accepts.' })
})

t.test('a missing Host and an unknown Expect get the Error body, as JSON, and the connection closes', async (t) => {
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const noHost = await raw(app, 'GET /health HTTP/1.1\r\n\r\n')
  t.match(noHost, /^HTTP\/1.1 400 Bad Request\r\n/)
  t.match(noHost, /\r\ncontent-type: application\/json; charset=utf-8\r\n/i)
  t.match(noHost, /\r\nconnection: close\r\n/i)
  t.same(errorBodyOf(noHost), { error: 400, message: 'The Host header is missing: HTTP/1.1 requires one.' })
  t.match(await raw(app, 'GET /health HTTP/1.0\r\n\r\n'), /^HTTP\/1.1 200 /, 'HTTP/1.0 needs no Host')

  const expect = await raw(app, 'POST /plants HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nContent-Length: 2\r\n\r\n{}')
  t.match(expect, /^HTTP\/1.1 417 Expectation Failed\r\n/)
  t.match(expect, /\r\ncontent-type: application\/json; charset=utf-8\r\n/i)
  t.same(errorBodyOf(expect), { error: 417, message: 'The Expect header is not supported: only 100-continue is.' })
})

t.test('a request that arrives while shutting down gets a 503 with the Error body', async (t) => {
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const socket = connect((app.server.address() as { port: number }).port, '127.0.0.1')
  // Listened for now: were the connection closed during the pauses below, a 'close'
  // listened for only after them would never come.
  const socketClosed = once(socket, 'close')
  await once(socket, 'connect')
  let answer = ''
  socket.on('data', (chunk) => { answer += chunk.toString() })
  // A request in flight keeps the connection busy, so closing does not drop it as idle.
  const body = '{"id":1,"name":"Fern"}'
  socket.write(`POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH.authorization}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n{`)
  await new Promise((resolve) => setTimeout(resolve, 100))
  const closed = app.close()
  await new Promise((resolve) => setTimeout(resolve, 100))
  socket.end(`${body.slice(1)}GET /plants/1 HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH.authorization}\r\n\r\n`)
  await bounded(socketClosed, CLOSE_MS, 'the app closing the connection', () => `received: ${JSON.stringify(answer)}`)
  await closed
  const [first, second] = answer.split(/(?=HTTP\/1.1 )/)
  t.match(first, /^HTTP\/1.1 200 OK\r\n/, 'the request in flight is answered')
  t.match(second, /^HTTP\/1.1 503 Service Unavailable\r\n/)
  t.match(second, /\r\nretry-after: 2\r\n/i, 'with Retry-After')
  t.match(second, /\r\ncontent-type: application\/json; charset=utf-8\r\n/i)
  t.same(errorBodyOf(second), { error: 503, message: 'The service is shutting down; retry in a few seconds.' })
})

t.test('a complete request pipelined before garbage is answered before the 400', async (t) => {
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const post = (id: number) => {
    const body = `{"id":${id},"name":"Fern"}`
    return `POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH.authorization}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`
  }
  const answer = await raw(app, `${post(1)}${post(2)}GARBAGE / HTTP/1.1\r\n\r\n`)
  const responses = answer.split(/(?=HTTP\/1.1 )/)
  t.equal(responses.length, 3, 'three answers')
  t.match(responses[0], /^HTTP\/1.1 200 OK\r\n[^]*\r\n\r\n{"name":"Fern"}$/)
  t.match(responses[1], /^HTTP\/1.1 200 OK\r\n[^]*\r\n\r\n{"name":"Fern"}$/)
  t.match(responses[2], /^HTTP\/1.1 400 Bad Request\r\n/)
  t.same(errorBodyOf(responses[2]), { error: 400, message: 'The request is not valid HTTP/1.1.' })
  for (const id of [1, 2]) t.equal((await getPlant(app, id)).statusCode, 200, `plant ${id} was committed, and its client was told`)
})
