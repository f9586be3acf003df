import { once } from 'node:events'
import { request } from 'node:http'
import { connect, type AddressInfo, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import t, { type Test } from 'tap'
import { clientOf } from '../../../src/http/connections.js'
import { buildApp } from '../../../src/app.js'
import { loadConfig } from '../../../src/config/index.js'
import { AUTH, build, TOKEN } from '../../helpers/build.js'
import { bounded, pollUntil } from '../../helpers/bounded.js'

// Every address of 127.0.0.0/8 is loopback on Linux: each stands for a client of its own.
const ATTACKER = '127.0.0.2'
const CLIENT = '127.0.0.3'

async function listening (t: Test, env: Record<string, string> = {}): Promise<{ app: FastifyInstance, port: number }> {
  const app = await build(t, env)
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, port: (app.server.address() as AddressInfo).port }
}

interface Held {
  socket: Socket
  /** Whether the server closed it (or refused it: closed as soon as accepted). */
  closed: () => boolean
  /** Everything the server sent on it. */
  received: () => string
}

/** A connection from `from`, held open by the test; it has connected (or been refused) when this resolves. */
async function hold (port: number, from: string): Promise<Held> {
  const socket = connect({ host: '127.0.0.1', port, localAddress: from })
  let closed = false
  let received = ''
  socket.on('error', () => {})
  socket.on('data', (chunk) => { received += chunk.toString('latin1') })
  socket.on('end', () => { closed = true })
  socket.on('close', () => { closed = true })
  await Promise.race([once(socket, 'connect'), once(socket, 'close')])
  return { socket, closed: () => closed, received: () => received }
}

/** A keep-alive connection from `from` that has had one GET /health answered, and then idles. */
async function idleAfterHealth (port: number, from: string): Promise<Held> {
  const held = await hold(port, from)
  if (held.closed()) return held
  held.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n')
  await bounded(pollUntil(() => held.received().endsWith('{"status":"ok"}') || held.closed(), 30_000, 'the answer to GET /health'), 31_000, 'an answer')
  return held
}

/** A connection from `from` that sends the start of a request and then trickles a header byte now and then, never finishing. */
async function slowHeaders (port: number, from: string): Promise<Held> {
  const held = await hold(port, from)
  if (held.closed()) return held
  held.socket.write('GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ')
  const trickle = setInterval(() => { if (!held.closed()) held.socket.write('a') }, 500)
  held.socket.on('close', () => clearInterval(trickle))
  return held
}

/** A request from `from` on a connection of its own: its status, or the network error's code. */
async function send (port: number, from: string, method = 'GET', path = '/health', body?: string): Promise<number | string> {
  return await new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, localAddress: from, method, path, agent: false, headers: body === undefined ? {} : { ...AUTH, 'content-type': 'application/json' } })
    req.on('response', (res) => { res.resume(); res.on('end', () => resolve(res.statusCode as number)) })
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message))
    req.setTimeout(10_000, () => req.destroy(new Error('no answer within 10 s')))
    req.end(body)
  })
}

async function openMany (count: number, open: () => Promise<Held>): Promise<Held[]> {
  const all: Held[] = []
  // In rounds, as a client's pool would open them: a burst of a thousand SYNs would overflow the listen backlog.
  for (let i = 0; i < count; i += 100) all.push(...await Promise.all(Array.from({ length: Math.min(100, count - i) }, open)))
  return all
}

const stillOpen = (held: Held[]) => held.filter((h) => !h.closed()).length

t.test('one address holding a thousand idle keep-alive connections leaves every other address served', async (t) => {
  const { port } = await listening(t)
  const attacker = await openMany(1000, () => idleAfterHealth(port, ATTACKER))
  t.teardown(() => { for (const held of attacker) held.socket.destroy() })
  t.equal(await send(port, CLIENT), 200, 'another address: GET /health')
  t.equal(await send(port, CLIENT, 'POST', '/plants', '{"id":1,"name":"Fern"}'), 200, 'and a create')

  await pollUntil(() => stillOpen(attacker) <= 250, 10_000, () => `${stillOpen(attacker)} of the attacker's connections open`)
  t.equal(stillOpen(attacker), 250, 'the attacker holds a quarter of MAX_CONNECTIONS, no more')
})

t.test('one address holding a thousand connections that send their headers slowly leaves every other address served', async (t) => {
  // Headers that may take a minute: none of the attacker's connections ends by itself during the test.
  const { port } = await listening(t, { HEADERS_TIMEOUT: '60000', REQUEST_TIMEOUT: '60000' })
  const attacker = await openMany(1000, () => slowHeaders(port, ATTACKER))
  t.teardown(() => { for (const held of attacker) held.socket.destroy() })
  for (const from of [CLIENT, '127.0.0.4', '127.0.0.5']) t.equal(await send(port, from), 200, `${from}: GET /health`)
  t.equal(await send(port, CLIENT, 'POST', '/plants', '{"id":1,"name":"Fern"}'), 200, 'and a create')

  await pollUntil(() => stillOpen(attacker) <= 250, 10_000, () => `${stillOpen(attacker)} of the attacker's connections open`)
  await sleep(500)
  t.equal(stillOpen(attacker), 250, 'the attacker holds a quarter of MAX_CONNECTIONS, no more')
})

t.test('at MAX_CONNECTIONS, the connection idle the longest is closed to admit a new one; none idle, the new one is refused', async (t) => {
  const { port } = await listening(t, { MAX_CONNECTIONS: '4', MAX_CONNECTIONS_PER_ADDRESS: '4' })
  const all: Held[] = []
  t.teardown(() => { for (const held of all) held.socket.destroy() })
  const idle = async (from: string) => { const held = await idleAfterHealth(port, from); all.push(held); return held }
  const closed = () => all.map((held) => held.closed())

  // In order: the first has been idle the longest.
  const c = [await idle(ATTACKER), await idle(ATTACKER), await idle(ATTACKER), await idle(ATTACKER)]
  t.same(closed(), [false, false, false, false])
  const n0 = await idle(CLIENT)
  t.match(n0.received(), /^HTTP\/1.1 200 OK/, 'a new client is served')
  await pollUntil(() => c[0].closed(), 5000, 'the longest idle closed')
  t.same(closed(), [true, false, false, false, false], 'the one idle the longest, and only it, was closed')

  // A connection used again is idle since its last answer: later in the order.
  c[1].socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n')
  await pollUntil(() => c[1].received().split('{"status":"ok"}').length === 3, 5000, 'the second answer')
  await idle('127.0.0.4')
  await idle('127.0.0.5')
  await pollUntil(() => c[2].closed() && c[3].closed(), 5000, 'the next two closed')
  t.same(closed(), [true, false, true, true, false, false, false], 'the idlest two closed; the one used again stays')

  // Connections that have not sent a request yet, or are sending one, are never closed to make room.
  const busy = [await slowHeaders(port, '127.0.0.6'), await slowHeaders(port, '127.0.0.6'), await hold(port, '127.0.0.7'), await hold(port, '127.0.0.7')]
  all.push(...busy)
  await pollUntil(() => closed().slice(0, 7).every(Boolean), 5000, 'every idle one closed, idlest first')
  t.equal(stillOpen(busy), 4)
  t.equal(await send(port, CLIENT), 'ECONNRESET', 'none idle: the new connection is refused')
  t.equal(stillOpen(busy), 4, 'and the busy ones stay')
})

t.test('MAX_CONNECTIONS_PER_ADDRESS: an address at its cap has its own idlest connection closed, or is refused', async (t) => {
  const lines: Array<Record<string, unknown>> = []
  const app = await buildApp(loadConfig({ API_TOKENS: TOKEN, DATABASE_URL: 'sqlite::memory:', MAX_CONNECTIONS_PER_ADDRESS: '2' }), { logStream: { write: (line) => { lines.push(JSON.parse(line)) } } })
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as AddressInfo).port
  const idle = [await idleAfterHealth(port, ATTACKER), await idleAfterHealth(port, ATTACKER)]
  t.teardown(() => { for (const held of idle) held.socket.destroy() })
  t.equal(await send(port, ATTACKER), 200, 'a third from the same address is served')
  await pollUntil(() => idle[0].closed(), 5000, 'its idlest closed')
  t.notOk(idle[1].closed())

  const slow = [await slowHeaders(port, CLIENT), await slowHeaders(port, CLIENT)]
  t.teardown(() => { for (const held of slow) held.socket.destroy() })
  t.equal(await send(port, CLIENT), 'ECONNRESET', 'none of its own idle: refused')
  t.equal(await send(port, CLIENT), 'ECONNRESET', 'again')
  t.equal(await send(port, '127.0.0.4'), 200, 'another address is not')
  t.equal(stillOpen(slow), 2)
  const warnings = lines.filter((line) => line.msg === 'connections refused: MAX_CONNECTIONS_PER_ADDRESS are open from one address')
  t.match(warnings, [{ level: 40, maxConnectionsPerAddress: 2, dropped: 1 }], 'one line for the burst')
})

t.test('a trusted proxy\'s connections carry many clients: no cap per address for them', async (t) => {
  const PROXY = '127.0.0.8'
  const { port } = await listening(t, { MAX_CONNECTIONS_PER_ADDRESS: '2', TRUST_PROXY: PROXY })
  const proxied = await openMany(6, () => slowHeaders(port, PROXY))
  const direct = await openMany(6, () => slowHeaders(port, ATTACKER))
  t.teardown(() => { for (const held of [...proxied, ...direct]) held.socket.destroy() })
  await pollUntil(() => stillOpen(direct) <= 2, 10_000, () => `${stillOpen(direct)} direct connections open`)
  await sleep(500)
  t.equal(stillOpen(proxied), 6, 'the proxy keeps all its connections')
  t.equal(stillOpen(direct), 2, 'an untrusted address is capped')
})

t.test('a client is an IPv4 address, or an IPv6 /64', async (t) => {
  t.equal(clientOf('127.0.0.2'), '127.0.0.2')
  t.equal(clientOf('::ffff:127.0.0.2'), '127.0.0.2', 'an IPv4-mapped address is its IPv4 address')
  t.equal(clientOf('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64')
  t.equal(clientOf('2001:db8:1:2::ffff'), '2001:db8:1:2::/64', 'one host, one /64')
  t.not(clientOf('2001:db8:1:3::1'), clientOf('2001:db8:1:2::1'))
  t.equal(clientOf(undefined), 'unknown', 'a socket already gone has no address')
})
