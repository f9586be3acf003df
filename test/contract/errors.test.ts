import { connect } from 'node:net'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { assertError, AUTH, build, getPlant } from '../helpers/build.js'

/** Sends raw bytes to a listening app and returns the whole answer. */
async function raw (app: FastifyInstance, request: string): Promise<string> {
  const address = app.server.address() as { port: number }
  return await new Promise((resolve, reject) => {
    const socket = connect(address.port, '127.0.0.1', () => socket.end(request))
    let answer = ''
    socket.on('data', (chunk) => { answer += chunk.toString() })
    socket.on('close', () => resolve(answer))
    socket.on('error', reject)
  })
}

function errorBodyOf (answer: string): unknown {
  return JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))
}

t.test('unknown routes and methods: 404 with the Error body', async (t) => {
  const app = await build(t)
  assertError(t, await app.inject('/nope'), 404, /GET \/nope/)
  assertError(t, await app.inject({ method: 'DELETE', url: '/plants', headers: AUTH }), 404, /DELETE \/plants/)
  assertError(t, await app.inject({ method: 'PUT', url: '/plants/1', headers: AUTH }), 404)
  assertError(t, await app.inject({ method: 'PATCH', url: '/plants/1', headers: AUTH }), 404)
  assertError(t, await app.inject({ method: 'POST', url: '/plants/1', headers: AUTH }), 404)
  assertError(t, await app.inject({ method: 'GET', url: '/plants/1/leaves', headers: AUTH }), 404)
})

t.test('errors Fastify raises before a route runs keep the Error body', async (t) => {
  const app = await build(t)
  assertError(t, await app.inject({ method: 'GET', url: '/plants/%zz', headers: AUTH }), 400, /malformed/)
  assertError(t, await getPlant(app, '1'.repeat(101)), 400, /path parameter/)
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
