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
  /** Resolves once it is closed. */
  gone: Promise<unknown>
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
  const gone = new Promise((resolve) => socket.once('close', resolve))
  await Promise.race([once(socket, 'connect'), gone])
  return { socket, closed: () => closed, received: () => received, gone }
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

/** A connection from `from` that sends a request's headers at once and then trickles its body, never finishing. */
async function slowBody (port: number, from: string): Promise<Held> {
  const held = await hold(port, from)
  if (held.closed()) return held
  // An unknown path: its body is read before the 404, with no token needed.
  held.socket.write('POST /nothing HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n[')
  const trickle = setInterval(() => { if (!held.closed()) held.socket.write(' ') }, 500)
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

  // Idle ones go first, before any that has not sent a whole request.
  const unfinished = [await slowHeaders(port, '127.0.0.6'), await slowHeaders(port, '127.0.0.6'), await hold(port, '127.0.0.7'), await hold(port, '127.0.0.7')]
  all.push(...unfinished)
  await pollUntil(() => closed().slice(0, 7).every(Boolean), 5000, 'every idle one closed, idlest first')
  await sleep(200)
  t.equal(stillOpen(unfinished), 4, 'and only they')
})

t.test('at MAX_CONNECTIONS with none idle, the oldest that has not sent a whole request is closed; one whose request is being answered never is', async (t) => {
  const app = await buildApp(loadConfig({ API_TOKENS: TOKEN, LOG_LEVEL: 'silent', DATABASE_URL: 'sqlite::memory:', MAX_EVENT_LOOP_DELAY: '0', MAX_CONNECTIONS: '4', HEADERS_TIMEOUT: '60000', REQUEST_TIMEOUT: '60000' }))
  // Answers that wait for the test: their requests have all arrived, and are being answered.
  const waiting: Array<() => void> = []
  app.get('/wait', async () => { await new Promise<void>((resolve) => waiting.push(resolve)); return { status: 'done' } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as AddressInfo).port
  const all: Held[] = []
  t.teardown(async () => {
    for (const answer of waiting) answer()
    for (const held of all) held.socket.destroy()
    await app.close()
  })
  const opened = async (open: Promise<Held>) => { const held = await open; all.push(held); return held }
  const answering = async (from: string) => {
    const held = await opened(hold(port, from))
    const before = waiting.length
    held.socket.write('GET /wait HTTP/1.1\r\nHost: x\r\n\r\n')
    await pollUntil(() => waiting.length > before, 5000, 'the request being answered')
    return held
  }
  const closed = () => all.map((held) => held.closed())

  const answered = await answering('127.0.0.2')
  const unfinished = [await opened(hold(port, '127.0.0.3')), await opened(slowHeaders(port, '127.0.0.4')), await opened(slowBody(port, '127.0.0.5'))]
  await sleep(200)
  for (const [i, what] of ['silent', 'sending its headers slowly', 'sending its body slowly'].entries()) {
    // A new connection, silent itself: the room is full.
    await opened(hold(port, `127.0.0.${6 + i}`))
    await pollUntil(() => unfinished[i].closed(), 5000, `the ${what} one closed`)
    await sleep(200)
    t.same(closed(), [false, ...unfinished.map((_, j) => j <= i), ...Array.from({ length: i + 1 }, () => false)], `the oldest unfinished closed: the one ${what}`)
  }
  t.equal(await send(port, '127.0.0.9'), 200, 'a client that sends a request is served')
  t.ok(all[4].closed(), 'in place of the oldest silent one')
  t.notOk(answered.closed(), 'the one being answered stays')

  // Answered, it is idle: the first to go, before the unfinished.
  const more = await opened(hold(port, '127.0.0.10'))
  ;(waiting.shift() as () => void)()
  await pollUntil(() => answered.received().endsWith('{"status":"done"}'), 5000, 'the answer')
  await opened(hold(port, '127.0.0.11'))
  await pollUntil(() => answered.closed(), 5000, 'the idle one closed')
  await sleep(200)
  t.same(closed().slice(5), [false, false, false, false], 'and only it')
  t.notOk(more.closed(), 'the unfinished ones stay')

  // Every connection being answered: the new one is refused.
  const busy = [await answering('127.0.0.12'), await answering('127.0.0.13'), await answering('127.0.0.14'), await answering('127.0.0.15')]
  t.equal(await send(port, '127.0.0.9'), 'ECONNRESET', 'none idle or unfinished: the new connection is refused')
  t.equal(stillOpen(busy), 4, 'and those being answered stay')
})

// Five addresses, a quarter of MAX_CONNECTIONS each, as the attacker had (scaled down).
const ATTACKERS = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6']
const modes = [['silent', hold], ['slow-header', slowHeaders], ['slow-body', slowBody]] as const

for (const [mode, open] of modes) {
  t.test(`five addresses within their cap, each holding ${mode} connections reopened as soon as they close, leave a client that sends requests served`, async (t) => {
    const { port } = await listening(t, { MAX_CONNECTIONS: '200', MAX_CONNECTIONS_PER_ADDRESS: '50', HEADERS_TIMEOUT: '60000', REQUEST_TIMEOUT: '60000' })
    const ending = new AbortController()
    const live = new Set<Held>()
    const keep = async (from: string) => {
      while (!ending.signal.aborted) {
        const held = await open(port, from)
        if (ending.signal.aborted) held.socket.destroy()
        live.add(held)
        await held.gone
        live.delete(held)
      }
    }
    // Each address a quarter of the room: more connections than it holds.
    const attack = ATTACKERS.flatMap((from) => Array.from({ length: 50 }, () => keep(from)))
    const stop = async () => {
      ending.abort()
      for (const held of live) held.socket.destroy()
      await Promise.all(attack)
    }
    t.teardown(stop)
    await pollUntil(() => stillOpen([...live]) >= 200, 30_000, () => `${stillOpen([...live])} of the attackers' connections open`)
    await sleep(500)

    const answers: Array<number | string> = []
    for (let i = 0; i < 20; i++) answers.push(await send(port, '127.0.0.7'))
    await stop()
    const served = answers.filter((answer) => answer === 200).length
    t.ok(served >= 18, `${served} of its 20 new connections answered (${answers.join(', ')})`)
  })
}

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
