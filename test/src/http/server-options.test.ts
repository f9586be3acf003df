import { once } from 'node:events'
import { createServer, connect, type Socket } from 'node:net'
import t, { type Test } from 'tap'
import { serverOptions } from '../../../src/http/server-options.js'
import { bounded } from '../../helpers/bounded.js'

const { clientErrorHandler } = serverOptions({ bodyLimit: 1, logLevel: 'silent', requestTimeout: 1000, headersTimeout: 1000, keepAliveTimeout: 1000, trustProxy: false }) as {
  clientErrorHandler: (error: NodeJS.ErrnoException, socket: Socket) => void
}

/**
 * A real connected socket pair: the server side for the handler, the client side to read;
 * `answer` is all the client read once its side closes, within 10 s (it takes milliseconds).
 */
async function pair (t: Test): Promise<{ server: Socket, answer: Promise<string> }> {
  const listener = createServer()
  listener.listen(0, '127.0.0.1')
  await once(listener, 'listening')
  t.teardown(() => listener.close())
  const client = connect((listener.address() as { port: number }).port, '127.0.0.1')
  const [server] = await once(listener, 'connection') as [Socket]
  server.on('error', () => {})
  let data = ''
  client.on('data', (chunk) => { data += chunk })
  const answer = bounded(once(client, 'close'), 10_000, 'the connection closing', () => `received: ${JSON.stringify(data)}`).then(() => data)
  t.teardown(() => { client.destroy() })
  return { server, answer }
}

t.test('a request that arrives too slowly gets a 408 with the Error body', async (t) => {
  const { server, answer } = await pair(t)
  clientErrorHandler(Object.assign(new Error('timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), server)
  const text = await answer
  t.match(text, /^HTTP\/1.1 408 Request Timeout\r\n/)
  t.match(text, /\r\n\r\n{"error":408,"message":"The request took too long to arrive."}$/)
})

t.test('a reset or destroyed connection gets nothing', async (t) => {
  const { server, answer } = await pair(t)
  clientErrorHandler(Object.assign(new Error('reset'), { code: 'ECONNRESET' }), server)
  t.notOk(server.destroyed, 'left alone')
  server.destroy()
  clientErrorHandler(Object.assign(new Error('bad'), { code: 'HPE_INVALID_METHOD' }), server)
  t.equal(await answer, '')
})
