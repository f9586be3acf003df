import { once } from 'node:events'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { createClient, PlantStoreError } from '../../../src/client/index.js'
import { closedPort } from '../../helpers/receiver.js'
import { recordingFetch } from '../../helpers/service.js'

// What lies between a client and the service can fail in ways the service never
// does: no answer, a proxy's own page, a stalled connection. These tests put such
// a thing in front of the client: a refused port, or a small HTTP server that
// answers as a misbehaving proxy would. The service itself is in client-*.test.ts.

type Handler = (request: IncomingMessage, response: ServerResponse) => void

async function between (t: Test, handler: Handler): Promise<string> {
  const server = createServer(handler).listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve) }))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

function json (response: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(body)
}

t.test('a base URL with a path keeps it, and the options are checked at once', async (t) => {
  t.throws(() => createClient({ baseUrl: 'ftp://example.com', token: 't' }), TypeError)
  t.throws(() => createClient({ baseUrl: 'http://user:pw@127.0.0.1', token: 't' }), /without user info/)
  t.throws(() => createClient({ baseUrl: 'not a url', token: 't' }), TypeError)
  t.throws(() => createClient({ baseUrl: 'http://127.0.0.1', token: '' }), /non-empty string of visible ASCII/)
  t.throws(() => createClient({ baseUrl: 'http://127.0.0.1', token: 'two words' }), /visible ASCII/)
  t.throws(() => createClient({ baseUrl: 'http://127.0.0.1', token: 'line\nbreak' }), /visible ASCII/)
  t.throws(() => createClient({ baseUrl: 'http://127.0.0.1', token: 't', retries: -1 }), /retries.max must be a whole number/)
  t.throws(() => createClient({ baseUrl: 'http://127.0.0.1', token: 't', retries: { baseDelay: 1.5 } }), /retries.baseDelay/)
  const global = globalThis.fetch
  t.teardown(() => { globalThis.fetch = global })
  // @ts-expect-error a runtime without fetch
  globalThis.fetch = undefined
  t.throws(() => createClient({ baseUrl: 'http://127.0.0.1', token: 't' }), /fetch is not available here/)
  globalThis.fetch = global

  const { fetch, exchanges } = recordingFetch()
  const origin = `http://127.0.0.1:${await closedPort()}`
  for (const baseUrl of [`${origin}/v1`, `${origin}/v1/`, new URL(`${origin}/v1?x=1#y`)]) {
    const client = createClient({ baseUrl, token: 't', fetch, retries: 0 })
    await t.rejects(client.get(7), { name: 'PlantStoreError', kind: 'network' })
    t.equal(exchanges.at(-1)?.url, `${origin}/v1/plants/7`, String(baseUrl))
  }
})

t.test('no answer at all: idempotent calls retry with backoff, others fail at once', async (t) => {
  const { fetch, exchanges } = recordingFetch()
  const client = createClient({ baseUrl: `http://127.0.0.1:${await closedPort()}`, token: 'secret-token', fetch, retries: { max: 3, baseDelay: 10 } })
  const error = await client.get(1).catch((error: unknown) => error)
  t.ok(error instanceof PlantStoreError)
  t.match(error, { kind: 'network', status: undefined, retryAfter: undefined, method: 'GET', message: /^No answer to GET http:\/\/127\.0\.0\.1:\d+\/plants\/1: fetch failed$/ })
  t.match((error as Error).cause, { message: 'fetch failed' })
  t.equal(exchanges.length, 4, 'the first attempt and three retries')

  exchanges.length = 0
  await t.rejects(client.webhooks.create({ url: 'https://example.com/hook' }), { name: 'PlantStoreError', kind: 'network', method: 'POST' })
  await t.rejects(client.webhooks.rotateSecret('w1'), { name: 'PlantStoreError', kind: 'network' })
  t.equal(exchanges.length, 2, 'a new endpoint or secret is asked for once: the service may have made it')
})

t.test('a proxy\'s own answers: the status and a message, even without the Error body', async (t) => {
  const base = await between(t, (request, response) => {
    if (request.url === '/plants/1') response.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad Gateway</h1>')
    else if (request.url === '/plants/2') response.writeHead(200, { 'content-type': 'text/html' }).end('<p>welcome</p>')
    else if (request.url === '/plants/3') json(response, 503, '{"error":503,"message":"Down for a while."}', { 'retry-after': '3600' })
    else if (request.url === '/plants/4') json(response, 500, '{"error":500}')
    else if (request.url === '/plants/5') response.writeHead(403, { 'content-type': 'text/html' }).end('<h1>Forbidden</h1>')
    else if (request.url === '/plants/6') json(response, 200, '"a string, not a plant"')
    else json(response, 200, '{"not":"a list"}')
  })
  const { fetch, exchanges } = recordingFetch()
  const client = createClient({ baseUrl: base, token: 't', fetch, retries: { max: 2, maxRetryAfter: 60_000 } })
  t.match(await client.get(1).catch((error: unknown) => error), { kind: 'other', status: 502, message: `The service answered GET ${base}/plants/1 with 502` })
  t.match(await client.get(2).catch((error: unknown) => error),
    { kind: 'other', status: 200, message: `The service answered GET ${base}/plants/2 with 200, not the answer this operation gives.` })
  t.match(await client.get(4).catch((error: unknown) => error), { kind: 'other', status: 500, message: /with 500$/ })
  t.match(await client.get(5).catch((error: unknown) => error), { kind: 'forbidden', status: 403, scope: undefined, message: /with 403$/ }, 'a proxy\'s 403 names no scope')
  t.match(await client.listPage().catch((error: unknown) => error), { kind: 'other', status: 200, message: /not the answer this operation gives/ })
  t.match(await client.get(6).catch((error: unknown) => error), { kind: 'other', status: 200, message: /not the answer this operation gives/ }, 'JSON that is no plant')
  const plant = await client.get(7)
  t.strictSame(plant, { not: 'a list' })
  t.equal(plant.etag, undefined, 'an answer without an ETag: none')

  const before = exchanges.length
  const started = performance.now()
  const down = await client.get(3).catch((error: unknown) => error) as PlantStoreError
  t.match(down, { kind: 'unavailable', status: 503, retryAfter: 3_600_000, message: 'Down for a while.' })
  if (down.kind === 'unavailable') t.equal(down.retryAfter, 3_600_000, 'Retry-After in milliseconds')
  t.equal(exchanges.length - before, 1, 'a wait longer than maxRetryAfter is not waited: the error goes to the caller')
  t.ok(performance.now() - started < 1000)
})

t.test('a 429 is retried even for what is done once; a 503 is not', async (t) => {
  let calls = 0
  const base = await between(t, (request, response) => {
    calls++
    if (request.url === '/webhooks' && calls === 1) json(response, 429, '{"error":429,"message":"Slow down."}', { 'retry-after': new Date(Date.now() + 2000).toUTCString() })
    else if (request.url === '/webhooks') json(response, 201, '{"id":"w1","url":"https://example.com/hook","enabled":true,"createdAt":"2026-01-01T00:00:00.000Z","secret":"whsec_x"}')
    else json(response, 503, '{"error":503,"message":"Shed."}', { 'retry-after': '0' })
  })
  const client = createClient({ baseUrl: base, token: 't' })
  const started = performance.now()
  t.match(await client.webhooks.create({ url: 'https://example.com/hook' }), { id: 'w1', secret: 'whsec_x' })
  t.equal(calls, 2)
  // An HTTP date has whole seconds: between one and two seconds were left of it.
  t.ok(performance.now() - started >= 900, 'the Retry-After date was waited for')
  calls = 0
  await t.rejects(client.webhooks.rotateSecret('w1'), { name: 'PlantStoreError', kind: 'unavailable' })
  t.equal(calls, 1, 'a 503 may come after the work was done: not retried for what is done once')
})

t.test('a 503 without Retry-After (a proxy in front of the service) is retried after the backoff', async (t) => {
  let calls = 0
  const base = await between(t, (_request, response) => {
    calls++
    if (calls === 1) json(response, 503, '{"error":503,"message":"No upstream."}')
    else json(response, 200, '{"name":"Fern"}')
  })
  const client = createClient({ baseUrl: base, token: 't', retries: { baseDelay: 10 } })
  t.strictSame(await client.get(1), { name: 'Fern' })
  t.equal(calls, 2)
})

t.test('next links: found among others, and never followed to another origin', async (t) => {
  const base = await between(t, (request, response) => {
    const url = new URL(request.url as string, 'http://x')
    const cursor = url.searchParams.get('cursor')
    if (cursor === null) json(response, 200, '[{"id":1,"name":"a"}]', { link: '</plants?cursor=B>; rel="prev", </plants?cursor=C>; rel="last next"' })
    else if (cursor === 'C') json(response, 200, '[{"id":9223372036854775807,"name":"b"}]', { link: '<plants?cursor=D>; rel=next' })
    else if (cursor === 'D') json(response, 200, '[]', { link: '<http://127.0.0.2:9/plants?cursor=E>; rel="next"' })
    else json(response, 200, '[]', { link: '</plants?page=2>; rel="next"' })
  })
  const client = createClient({ baseUrl: base, token: 't' })
  const seen: bigint[] = []
  const error = await (async () => { for await (const plant of client.list()) seen.push(plant.id) })().catch((error: unknown) => error)
  t.strictSame(seen, [1n, 9223372036854775807n], 'rel="last next" and an unquoted rel=next are followed')
  t.match(error, { kind: 'other', status: 200, message: 'The next link of ' + base + '/plants?cursor=D leaves its origin (http://127.0.0.2:9): not followed.' })
  t.strictSame(await client.listPage({ cursor: 'X' }), { items: [] }, 'a next link without a cursor gives none')
})

t.test('a signal aborts a call, its retries and its waits', async (t) => {
  const { fetch, exchanges } = recordingFetch()
  const refused = createClient({ baseUrl: `http://127.0.0.1:${await closedPort()}`, token: 't', fetch, retries: { max: 5, baseDelay: 60_000 } })
  await t.rejects(refused.get(1, { signal: AbortSignal.abort() }), { name: 'AbortError' })
  t.equal(exchanges.length, 0, 'an aborted signal sends nothing')

  // Told to wait 30 s before a retry: the abort ends the wait.
  const busy = await between(t, (_request, response) => json(response, 503, '{"error":503,"message":"Busy."}', { 'retry-after': '30' }))
  const patient = createClient({ baseUrl: busy, token: 't', fetch })
  const started = performance.now()
  await t.rejects(patient.get(1, { signal: AbortSignal.timeout(200) }), { name: 'TimeoutError' }, 'the reason, not a PlantStoreError')
  t.equal(exchanges.length, 1, 'aborted while waiting to retry')
  t.ok(performance.now() - started < 5000)

  // A server that takes the request and never answers.
  const stalled = await between(t, () => {})
  const client = createClient({ baseUrl: stalled, token: 't' })
  const controller = new AbortController()
  setTimeout(() => controller.abort(new Error('the caller gave up')), 200)
  await t.rejects(client.create({ id: 1, name: 'x' }, { signal: controller.signal }), { message: 'the caller gave up' })
})
