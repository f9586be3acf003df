import type { LookupAddress, LookupAllOptions } from 'node:dns'
import type { LookupFunction } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { Webhook } from 'standardwebhooks'
import type { ClaimedDelivery } from '../../../src/store/webhook-types.js'
import { attempt, createWebhookAgent, guardedLookup, RESPONSE_CAP, type AttemptOptions } from '../../../src/webhooks/deliver.js'
import { makeSecret } from '../../../src/webhooks/signing.js'
import { closedPort, startReceiver } from '../../helpers/receiver.js'

// Every connection in this file goes to 127.0.0.1 (or localhost): nothing else is ever dialled.
const BODY = '{"id":9223372036854775807,"name":"Ficus lyrata 🌿"}'
const SECRET = makeSecret()
const OPTIONS: AttemptOptions = { allowPrivate: true, timeout: 2000, schedule: [1000, 60_000] }

function delivery (url: string, attempts = 0): ClaimedDelivery {
  return { id: 'dlv_0001', endpointId: 'ep_1', url, secrets: [SECRET], body: BODY, attempts }
}

function agentFor (t: Test, options: Partial<AttemptOptions> = {}) {
  const agent = createWebhookAgent({ ...OPTIONS, ...options })
  t.teardown(() => agent.close())
  return agent
}

t.test('a 2xx succeeds: the stored body byte for byte, as JSON, signed', async (t) => {
  const receiver = await startReceiver(t, (_, response) => { response.writeHead(200).end('ok') })
  const outcome = await attempt(agentFor(t), delivery(`${receiver.origin}/hooks?x=1`), OPTIONS)
  t.same(outcome, { result: 'succeeded', status: 200 })
  const [request] = receiver.received
  t.equal(request.method, 'POST')
  t.equal(request.url, '/hooks?x=1')
  t.same(request.body, Buffer.from(BODY, 'utf8'), 'the exact bytes')
  t.equal(request.headers['content-type'], 'application/json')
  t.equal(request.headers['content-length'], String(Buffer.byteLength(BODY)))
  t.equal(request.headers['webhook-id'], 'dlv_0001')
  t.same(new Webhook(SECRET).verify(request.body, request.headers as Record<string, string>, { jsonParse: false }), undefined, 'verified')
  for (const status of [201, 202, 204, 299]) {
    receiver.answer((_, response) => { response.writeHead(status).end() })
    t.same(await attempt(agentFor(t), delivery(receiver.origin), OPTIONS), { result: 'succeeded', status }, `${status}`)
  }
})

t.test('a 500 is retried by the schedule, then failed', async (t) => {
  const receiver = await startReceiver(t, (_, response) => { response.writeHead(500).end('down') })
  const agent = agentFor(t)
  const before = Date.now()
  const first = await attempt(agent, delivery(receiver.origin, 0), OPTIONS)
  t.match(first, { result: 'retry', status: 500, error: undefined })
  const delay = (first as { at: Date }).at.getTime() - before
  t.ok(delay >= 800 && delay <= 1200 + (Date.now() - before), `the first delay, jittered (${delay} ms)`)
  const second = await attempt(agent, delivery(receiver.origin, 1), OPTIONS) as { at: Date }
  t.ok(second.at.getTime() - Date.now() > 40_000, 'then the second delay')
  t.same(await attempt(agent, delivery(receiver.origin, 2), OPTIONS), { result: 'failed', status: 500, error: undefined }, 'the schedule is spent')
  for (const status of [400, 404, 429, 503]) {
    receiver.answer((_, response) => { response.writeHead(status).end() })
    t.match(await attempt(agent, delivery(receiver.origin), OPTIONS), { result: 'retry', status }, `${status}`)
  }
})

t.test('a redirect is a failure and is not followed', async (t) => {
  const target = await startReceiver(t)
  const receiver = await startReceiver(t, (_, response) => { response.writeHead(302, { location: `${target.origin}/elsewhere` }).end() })
  t.match(await attempt(agentFor(t), delivery(receiver.origin), OPTIONS), { result: 'retry', status: 302, error: 'a redirect is not followed' })
  for (const status of [301, 303, 307, 308]) {
    receiver.answer((_, response) => { response.writeHead(status, { location: `${target.origin}/elsewhere` }).end() })
    t.match(await attempt(agentFor(t), delivery(receiver.origin, 2), OPTIONS), { result: 'failed', status, error: 'a redirect is not followed' })
  }
  t.equal(target.connections(), 0, 'the Location was never visited')
})

t.test('a 410 says the endpoint is gone', async (t) => {
  const receiver = await startReceiver(t, (_, response) => { response.writeHead(410).end() })
  t.same(await attempt(agentFor(t), delivery(receiver.origin, 5), OPTIONS), { result: 'gone', status: 410 })
})

t.test('no answer within the timeout is a failure, whatever stage it stalls at', async (t) => {
  const silent = await startReceiver(t, () => {})
  const options = { ...OPTIONS, timeout: 300 }
  let started = Date.now()
  t.match(await attempt(agentFor(t, options), delivery(silent.origin), options), { result: 'retry', status: undefined, error: 'no answer within 300 ms' })
  t.ok(Date.now() - started < 1500, 'the attempt ends at its timeout')
  // Headers sent, then a body that never ends: the 2xx stands, the body is not waited for.
  const trickle = await startReceiver(t, (_, response) => { response.writeHead(200, { 'content-length': '100000' }); response.write('x') })
  started = Date.now()
  t.same(await attempt(agentFor(t, options), delivery(trickle.origin), options), { result: 'succeeded', status: 200 })
  t.ok(Date.now() - started < 1500)
})

t.test('a refused connection is a failure', async (t) => {
  const port = await closedPort()
  t.match(await attempt(agentFor(t), delivery(`http://127.0.0.1:${port}/`), OPTIONS), { result: 'retry', status: undefined, error: /^ECONNREFUSED: / })
  t.match(await attempt(agentFor(t), delivery(`http://127.0.0.1:${port}/`, 2), OPTIONS), { result: 'failed', error: /ECONNREFUSED/ })
})

t.test('a huge answer is read to a small cap and dropped', async (t) => {
  let written = 0
  const receiver = await startReceiver(t, async (_, response) => {
    response.writeHead(200)
    const chunk = Buffer.alloc(64 * 1024, 'x')
    const closed = new Promise((resolve) => response.once('close', resolve))
    // Up to 1 GiB, unless the sender lets go first.
    while (written < 2 ** 30 && !response.destroyed) {
      written += chunk.length
      if (!response.write(chunk)) await Promise.race([new Promise((resolve) => response.once('drain', resolve)), closed])
    }
    response.end()
  })
  const started = Date.now()
  t.same(await attempt(agentFor(t), delivery(receiver.origin), OPTIONS), { result: 'succeeded', status: 200 })
  t.ok(Date.now() - started < 1500, 'at once')
  await sleep(100)
  t.ok(written < 64 * 1024 * 1024, `the receiver stopped after ${written} bytes: the connection was dropped`)
  t.ok(RESPONSE_CAP <= 4096)
})

t.test('private targets refused: no connection is made, by literal address or by name', async (t) => {
  const receiver = await startReceiver(t)
  const options = { ...OPTIONS, allowPrivate: false }
  const agent = agentFor(t, options)
  t.match(await attempt(agent, delivery(`${receiver.origin}/`), options), { result: 'retry', status: undefined, error: /^refused: a loopback address$/ }, 'literal')
  t.match(await attempt(agent, delivery(`http://[::ffff:127.0.0.1]:${receiver.port}/`), options), { result: 'retry', error: /^refused: a loopback address$/ }, 'IPv4-mapped')
  t.match(await attempt(agent, delivery(`http://localhost:${receiver.port}/`, 2), options),
    { result: 'failed', status: undefined, error: /^refused: no public address$/ }, 'a name that resolves to loopback: neither its address nor its name')
  t.match(await attempt(agent, delivery(`https://localhost:${receiver.port}/`), options), { result: 'retry', error: /^refused: no public address$/ }, 'https too')
  t.equal(receiver.connections(), 0, 'the receiver saw no connection')
  t.equal(receiver.received.length, 0)

  // The same receiver, reached once private targets are allowed: the refusals above were the guard.
  t.match(await attempt(agentFor(t), delivery(`http://localhost:${receiver.port}/`), OPTIONS), { result: 'succeeded' }, 'allowed: by name')
  t.equal(receiver.received.length, 1)
})

t.test('the lookup refuses a name if any of its addresses is refused, and passes on the rest', async (t) => {
  type Answer = [Error | null, string | LookupAddress[] | undefined, number | undefined]
  const look = async (lookup: LookupFunction, hostname: string, all: boolean) => await new Promise<Answer>((resolve) => {
    lookup(hostname, { all } as never, (...args: unknown[]) => resolve(args as Answer))
  })
  // The system resolver, on a name /etc/hosts answers.
  let [error] = await look(guardedLookup(false), 'localhost', true)
  t.match(error, { name: 'RefusedAddressError', message: /^refused: no public address$/ })
  ;[error] = await look(guardedLookup(false), 'localhost', false)
  t.match(error, { name: 'RefusedAddressError' })
  const [, one, family] = await look(guardedLookup(true), 'localhost', false)
  t.ok(one === '127.0.0.1' || one === '::1', `one address (${String(one)})`)
  t.equal(family, one === '::1' ? 6 : 4)
  const [, all] = await look(guardedLookup(true), 'localhost', true)
  t.ok(Array.isArray(all) && all.some((entry) => entry.address === '127.0.0.1'), 'every address')

  // Made-up answers (nothing is dialled): one refused address among public ones refuses them all.
  const answering = (result: LookupAddress[] | Error) => (_: string, options: LookupAllOptions, callback: (error: Error | null, addresses: LookupAddress[]) => void) => {
    t.equal(options.all, true, 'every address is asked for')
    if (result instanceof Error) callback(result, [])
    else callback(null, result)
  }
  const mixed = [{ address: '93.184.215.14', family: 4 }, { address: '169.254.169.254', family: 4 }]
  ;[error] = await look(guardedLookup(true, answering(mixed)), 'rebind.example', true)
  t.match(error, { message: 'refused: no public address' }, 'never the metadata address')
  ;[error] = await look(guardedLookup(false, answering([{ address: '93.184.215.14', family: 4 }, { address: 'fd12::1', family: 6 }])), 'rebind.example', true)
  t.match(error, { message: 'refused: no public address' })
  const [none, publicOnly] = await look(guardedLookup(false, answering([mixed[0]])), 'public.example', true)
  t.equal(none, null)
  t.same(publicOnly, [mixed[0]], 'a public answer passes')
  const failure = Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.example'), { code: 'ENOTFOUND' })
  ;[error] = await look(guardedLookup(false, answering(failure)), 'nowhere.example', true)
  t.match(error, { name: 'RefusedAddressError', message: 'refused: no public address' }, 'a name that does not resolve reads the same')
  t.equal(error?.message.includes('nowhere'), false, 'and never names it')
  ;[error] = await look(guardedLookup(false, answering([])), 'empty.example', false)
  t.match(error, { name: 'RefusedAddressError', message: 'refused: no public address' })
})

t.test('a name that does not resolve and one that resolves to loopback give the same lastError', async (t) => {
  const receiver = await startReceiver(t)
  // Made-up answers: `.invalid` never resolves (RFC 6761), localhost is loopback. No query leaves the machine.
  const resolve = (hostname: string, _: LookupAllOptions, callback: (error: Error | null, addresses: LookupAddress[]) => void) => {
    if (hostname.endsWith('.invalid')) callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), [])
    else callback(null, [{ address: '127.0.0.1', family: 4 }])
  }
  const options = { ...OPTIONS, allowPrivate: false, resolve }
  const agent = agentFor(t, options)
  const unknown = await attempt(agent, delivery(`http://internal-billing.invalid:${receiver.port}/`), options)
  const loopback = await attempt(agent, delivery(`http://localhost:${receiver.port}/`), options)
  t.match(unknown, { result: 'retry', error: 'refused: no public address' })
  t.equal(unknown.result === 'retry' && unknown.error, loopback.result === 'retry' && loopback.error, 'the same words')
  t.equal(receiver.connections(), 0)
})
