import t from 'tap'
import { AUTH, build, getPlant, patchPlant, postPlant } from '../helpers/build.js'
import { otlpReceiver, type ReceivedSpan } from '../helpers/otlp.js'
import { closedPort, startReceiver } from '../helpers/receiver.js'

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736'
const PARENT_ID = '00f067aa0ba902b7'
const TRACEPARENT = `00-${TRACE_ID}-${PARENT_ID}-01`
const PATCH_TRACE_ID = '5c0a3e4688c8e1b7f3d9e2a1b0c4d6e8'

t.test('a span per request and per store batch, exported as OTLP/JSON; an incoming traceparent is honoured', async (t) => {
  const receiver = await otlpReceiver(t)
  const app = await build(t, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'plants-test' })
  const created = await postPlant(app, { id: 1, name: 'Fern' }, { ...AUTH, traceparent: TRACEPARENT })
  t.equal(created.statusCode, 200)
  t.equal((await getPlant(app, 1)).statusCode, 200)
  t.equal((await patchPlant(app, 1, { tag: 'shade' }, { ...AUTH, traceparent: `00-${PATCH_TRACE_ID}-${PARENT_ID}-01` })).statusCode, 200)
  t.equal((await app.inject('/health')).statusCode, 200)
  t.equal((await app.inject({ url: '/metrics', headers: AUTH })).statusCode, 200)
  await app.close() // sends what is buffered

  t.ok(receiver.requests.length > 0, 'exported')
  t.ok(receiver.requests.every((r) => r.path === '/v1/traces'), 'to the endpoint\'s /v1/traces')
  const { spans } = receiver
  t.ok(spans.every((span) => span.service === 'plants-test'), 'under OTEL_SERVICE_NAME')

  // The POST joins the caller's trace: its request span's parent is the caller's span.
  const post = spans.find((span) => span.name === 'POST /plants')
  t.ok(post, 'a span for the POST, named by its method and route')
  t.equal(post?.kind, 2, 'a server span')
  t.equal(post?.traceId, TRACE_ID)
  t.equal(post?.parentSpanId, PARENT_ID)
  t.same(post?.attributes, {
    'http.request.method': 'POST',
    'http.route': '/plants',
    'url.path': '/plants',
    'url.scheme': 'http',
    'server.address': 'localhost',
    'server.port': 80,
    'http.response.status_code': 200
  })

  // The store's commit of the batch that held the write: in its trace, linked to it.
  const commit = spans.find((span) => span.name === 'store commit') as unknown as ReceivedSpan & { links: Array<{ traceId: string, spanId: string }> }
  t.ok(commit, 'a store commit span')
  t.equal(commit?.traceId, TRACE_ID)
  t.equal(commit?.parentSpanId, post?.spanId, 'child of the request that wrote')
  t.match(commit?.links, [{ traceId: TRACE_ID, spanId: post?.spanId }], 'linked to it')
  t.same(commit?.attributes, { 'db.system.name': 'sqlite', 'db.operation.name': 'COMMIT', 'db.operation.batch.size': 1 })
  t.equal(spans.filter((span) => span.traceId === TRACE_ID).length, 2, 'no span per hook or handler')

  // A request with no traceparent starts a trace of its own.
  const get = spans.find((span) => span.name === 'GET /plants/:id')
  t.ok(get)
  t.not(get?.traceId, TRACE_ID)
  t.equal(get?.parentSpanId, undefined)
  t.equal(get?.attributes['http.route'], '/plants/:id')
  t.equal(get?.attributes['url.path'], '/plants/1')

  // A change: its span by the route's template, and its batch's commit beneath it, as for a create.
  const patch = spans.find((span) => span.name === 'PATCH /plants/:id')
  t.equal(patch?.traceId, PATCH_TRACE_ID)
  t.match(patch?.attributes, { 'http.request.method': 'PATCH', 'http.route': '/plants/:id', 'url.path': '/plants/1', 'http.response.status_code': 200 })
  const patchCommit = spans.find((span) => span.name === 'store commit' && span.traceId === PATCH_TRACE_ID)
  t.equal(patchCommit?.parentSpanId, patch?.spanId, 'its batch\'s commit: a child of the request that wrote')

  t.notOk(spans.some((span) => span.attributes['url.path'] === '/health'), 'the probes are not traced')
  t.notOk(spans.some((span) => span.attributes['url.path'] === '/metrics'), 'nor are the scrapes')
})

t.test('one store batch, linked to every sampled request it carried; a caller\'s unsampled trace exports nothing; a webhook attempt is a client span whose traceparent the receiver gets', async (t) => {
  const receiver = await otlpReceiver(t)
  const hooks = await startReceiver(t)
  const app = await build(t, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', WEBHOOK_ALLOW_PRIVATE: 'true' })
  t.equal((await app.inject({ method: 'POST', url: '/webhooks', headers: AUTH, payload: { url: `${hooks.origin}/hooks` } })).statusCode, 201)

  // Sent together, so that they share batches; the fourth comes from a caller that does not sample.
  const UNSAMPLED = '5bf92f3577b34da6a3ce929d0e0e4736'
  const answers = await Promise.all([1, 2, 3, 4].map((id) =>
    postPlant(app, { id, name: 'Fern' }, id === 4 ? { ...AUTH, traceparent: `00-${UNSAMPLED}-${PARENT_ID}-00` } : AUTH)))
  t.same(answers.map((answer) => answer.statusCode), [200, 200, 200, 200])
  const [delivered] = await hooks.waitFor(1)
  await app.close()
  const { spans } = receiver

  const posts = spans.filter((span) => span.name === 'POST /plants')
  t.equal(posts.length, 3, 'a span for each sampled create')
  t.notOk(spans.some((span) => span.traceId === UNSAMPLED), 'nothing of the unsampled caller\'s trace')
  const commits = spans.filter((span) => span.name === 'store commit') as Array<ReceivedSpan & { links?: Array<{ traceId: string, spanId: string }> }>
  const linked = commits.flatMap((commit) => (commit.links ?? []).map((link) => `${link.traceId}/${link.spanId}`))
  t.same(linked.sort(), posts.map((post) => `${post.traceId}/${post.spanId}`).sort(), 'each sampled request linked once, from the batch that carried it')
  for (const commit of commits) {
    const parent = posts.find((post) => post.spanId === commit.parentSpanId)
    t.ok(parent, 'in the trace of a request it carried')
    t.equal(commit.traceId, parent?.traceId)
    t.ok((commit.attributes['db.operation.batch.size'] as number) >= (commit.links ?? []).length, 'the batch\'s size counts every write')
  }
  t.equal(commits.reduce((sum, commit) => sum + (commit.attributes['db.operation.batch.size'] as number), 0), 4, 'the unsampled create was committed too')
  t.comment(`batches: ${commits.map((commit) => commit.attributes['db.operation.batch.size']).join(', ')}`)

  const attempt = spans.find((span) => span.name === 'webhook attempt')
  t.equal(attempt?.kind, 3, 'a client span')
  t.equal(delivered.headers.traceparent, `00-${attempt?.traceId}-${attempt?.spanId}-01`, 'whose traceparent the receiver got')
  t.match(attempt?.attributes, { 'http.request.method': 'POST', 'server.address': '127.0.0.1', 'server.port': hooks.port, 'http.response.status_code': 204, 'plant_store.webhook.outcome': 'succeeded' })
})

t.test('http/protobuf (the default): the export is protobuf, to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is', async (t) => {
  const receiver = await otlpReceiver(t)
  const app = await build(t, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/custom/traces` })
  t.equal((await postPlant(app, { id: 1, name: 'Fern' }, { ...AUTH, traceparent: TRACEPARENT })).statusCode, 200)
  await app.close()
  t.ok(receiver.requests.length > 0)
  const [first] = receiver.requests
  t.equal(first.path, '/custom/traces')
  t.equal(first.headers['content-type'], 'application/x-protobuf')
  // Protobuf carries ids as raw bytes and names as UTF-8.
  const body = Buffer.concat(receiver.requests.map((r) => r.body))
  t.ok(body.includes(Buffer.from(TRACE_ID, 'hex')), 'the caller\'s trace id')
  t.ok(body.includes(Buffer.from('store commit')), 'the store span')
  t.ok(body.includes(Buffer.from('plant-store')), 'the default service name')
})

t.test('two traced apps in one process keep their own exporters', async (t) => {
  const [one, two] = [await otlpReceiver(t), await otlpReceiver(t)]
  const apps = [
    await build(t, { OTEL_EXPORTER_OTLP_ENDPOINT: `${one.url}/`, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }),
    await build(t, { OTEL_EXPORTER_OTLP_ENDPOINT: two.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })
  ]
  await getPlant(apps[0], 1)
  await getPlant(apps[1], 2)
  await getPlant(apps[1], 3)
  for (const app of apps) await app.close()
  const paths = (receiver: typeof one) => receiver.spans.filter((s) => s.kind === 2).map((s) => s.attributes['url.path'])
  t.same(paths(one), ['/plants/1'])
  t.same(paths(two).sort(), ['/plants/2', '/plants/3'])
})

t.test('a collector that cannot be reached costs the spans, never a request or the shutdown', async (t) => {
  const { createServer } = await import('node:net')
  // A port that was just free: nothing listens there.
  const probe = createServer().listen(0, '127.0.0.1')
  await new Promise((resolve) => probe.once('listening', resolve))
  const port = (probe.address() as { port: number }).port
  await new Promise((resolve) => probe.close(resolve))

  const lines: Array<{ level: number, msg: string, reason?: string }> = []
  const { buildApp } = await import('../../src/app.js')
  const { loadConfig } = await import('../../src/config/index.js')
  // Credentials in the endpoint: never logged.
  const app = await buildApp(loadConfig({ API_TOKENS: 'k', DATABASE_URL: 'sqlite::memory:', OTEL_EXPORTER_OTLP_ENDPOINT: `http://user:s%40cret@127.0.0.1:${port}` }),
    { logStream: { write: (line) => { lines.push(JSON.parse(line)) } } })
  for (let id = 1; id <= 20; id++) {
    const res = await app.inject({ method: 'POST', url: '/plants', headers: { authorization: 'Bearer k', 'content-type': 'application/json' }, payload: { id, name: 'Fern' } })
    t.equal(res.statusCode, 200)
  }
  const started = Date.now()
  await app.close()
  t.ok(Date.now() - started < 3000, `closed in ${Date.now() - started} ms`)
  t.match(lines.filter((line) => line.level === 40), [{ msg: /^the trace collector did not take the last spans/, url: `http://[REDACTED]@127.0.0.1:${port}/v1/traces` }])
  t.notMatch(JSON.stringify(lines), /user|s%40cret|s@cret/, 'no credential in any line')
})

t.test('a collector that refuses the spans: the shutdown says so and completes', async (t) => {
  const receiver = await otlpReceiver(t, 400)
  const lines: Array<{ level: number, msg: string, reason?: string }> = []
  const { buildApp } = await import('../../src/app.js')
  const { loadConfig } = await import('../../src/config/index.js')
  const app = await buildApp(loadConfig({ API_TOKENS: 'k', DATABASE_URL: 'sqlite::memory:', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }),
    { logStream: { write: (line) => { lines.push(JSON.parse(line)) } } })
  t.equal((await app.inject({ url: '/plants/1', headers: { authorization: 'Bearer k' } })).statusCode, 404)
  await app.close()
  t.ok(receiver.requests.length > 0, 'it was offered them')
  t.match(lines.filter((line) => line.level === 40), [{ msg: 'the trace collector did not take the last spans: they are lost', reason: /./ }])
})

t.test('OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG choose which traces are recorded', async (t) => {
  async function traces (env: Record<string, string>, requests: (app: Awaited<ReturnType<typeof build>>) => Promise<void>): Promise<Set<string>> {
    const receiver = await otlpReceiver(t)
    const app = await build(t, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', ...env })
    await requests(app)
    await app.close()
    return new Set(receiver.spans.map((span) => span.traceId))
  }
  const sampledCaller = async (app: Awaited<ReturnType<typeof build>>): Promise<void> => {
    t.equal((await postPlant(app, { id: 1, name: 'Fern' }, { ...AUTH, traceparent: TRACEPARENT })).statusCode, 200)
  }
  const ownTraces = async (app: Awaited<ReturnType<typeof build>>): Promise<void> => {
    for (let i = 0; i < 60; i++) t.equal((await getPlant(app, 999)).statusCode, 404)
  }

  t.equal((await traces({}, ownTraces)).size, 60, 'unset: parentbased_always_on records every trace')
  t.equal((await traces({ OTEL_TRACES_SAMPLER: 'always_off' }, async (app) => { await sampledCaller(app); await ownTraces(app) })).size, 0, 'always_off: none, not even a sampled caller\'s')
  t.same([...await traces({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }, async (app) => { await sampledCaller(app); await ownTraces(app) })],
    [TRACE_ID], 'parentbased_traceidratio at 0: only the trace a sampled caller began')
  const some = (await traces({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' }, ownTraces)).size
  // Binomial(60, 0.5): outside 10..50 with a probability under one in a million.
  t.ok(some >= 10 && some <= 50, `traceidratio at 0.5: ${some} of 60 traces`)
})

t.test('under traceidratio as under the parent-based samplers, each recorded create\'s batch has a span, its child', async (t) => {
  const receiver = await otlpReceiver(t)
  const app = await build(t, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' })
  // One at a time: each create is a batch of its own.
  for (let id = 1; id <= 40; id++) t.equal((await postPlant(app, { id, name: 'Fern' })).statusCode, 200)
  await app.close()
  const creates = receiver.spans.filter((span) => span.name === 'POST /plants')
  const commits = receiver.spans.filter((span) => span.name === 'store commit')
  // Binomial(40, 0.5): outside 5..35 with a probability under one in a million.
  t.ok(creates.length >= 5 && creates.length <= 35, `${creates.length} of 40 creates recorded`)
  t.same(commits.map((span) => `${span.traceId}/${span.parentSpanId}`).sort(), creates.map((span) => `${span.traceId}/${span.spanId}`).sort(),
    'a commit span for each recorded create and for no other')
})

t.test('a webhook attempt that fails without an answer: its span is an error that says why', async (t) => {
  const receiver = await otlpReceiver(t)
  const app = await build(t, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '1h' })
  const registered = await app.inject({ method: 'POST', url: '/webhooks', headers: AUTH, payload: { url: `http://127.0.0.1:${await closedPort()}/hooks` } })
  t.equal(registered.statusCode, 201)
  t.equal((await postPlant(app, { id: 1, name: 'Fern' })).statusCode, 200)
  const deliveries = `/webhooks/${registered.json().id as string}/deliveries`
  for (let tries = 0; tries < 100; tries++) {
    if ((await app.inject({ url: deliveries, headers: AUTH })).json()[0]?.attempts === 1) break
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  await app.close()
  const span = receiver.spans.find((span) => span.name === 'webhook attempt') as unknown as { status: { code: number, message: string }, attributes: Record<string, unknown> }
  t.equal(span?.attributes['plant_store.webhook.outcome'], 'retry')
  t.equal(span?.status.code, 2, 'an error')
  t.match(span?.status.message, /ECONNREFUSED/, 'with the attempt\'s error')
})
