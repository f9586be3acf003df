import t from 'tap'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config/index.js'
import { openStore } from '../../src/store/index.js'
import { makeSecret } from '../../src/webhooks/signing.js'
import { postPlant, TOKEN } from '../helpers/build.js'
import { histogram, scrape, value } from '../helpers/metrics.js'
import { otlpReceiver } from '../helpers/otlp.js'
import { startReceiver } from '../helpers/receiver.js'
import { forEachStore } from '../helpers/stores.js'
import { waitUntil } from '../helpers/webhooks.js'

const ATTEMPTS = 'plant_store_webhook_attempts_total'

forEachStore(t, (t, _build, databaseUrl) => {
  t.test('webhook attempts: outcomes, latency, backlog and its oldest age in the metrics; a span each, its traceparent on the request', async (t) => {
    const collector = await otlpReceiver(t)
    const config = loadConfig({
      API_TOKENS: TOKEN,
      LOG_LEVEL: 'silent',
      DATABASE_URL: await databaseUrl(t),
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_RETRY_SCHEDULE: '100ms',
      WEBHOOK_TIMEOUT: '1000',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json'
    })
    const store = await openStore(config)
    const app = await buildApp(config, { store })
    t.teardown(() => app.close())
    await app.ready()

    // One receiver that takes everything; one that fails once, then takes it; one that is gone.
    const ok = await startReceiver(t)
    let failures = 1
    const flaky = await startReceiver(t, (_request, response) => { response.writeHead(failures-- > 0 ? 500 : 200).end() })
    const gone = await startReceiver(t, (_request, response) => { response.writeHead(410).end() })
    for (const receiver of [ok, flaky, gone]) await store.webhooks.createEndpoint({ url: receiver.origin, secret: makeSecret() })

    const idle = await scrape(app)
    t.equal(value(idle, 'plant_store_webhook_backlog'), 0)
    t.equal(value(idle, 'plant_store_webhook_oldest_pending_age_seconds'), 0)

    t.equal((await postPlant(app, { id: 1, name: 'Fern' })).statusCode, 200)
    await ok.waitFor(1)
    await gone.waitFor(1)
    await flaky.waitFor(2)
    await waitUntil('every attempt is counted', async () => {
      const families = await scrape(app)
      return ['succeeded', 'retry', 'gone'].reduce((sum, outcome) => sum + value(families, ATTEMPTS, { outcome }), 0) === 4
    })
    const families = await scrape(app)
    t.equal(value(families, ATTEMPTS, { outcome: 'succeeded' }), 2, 'ok, and flaky on its second try')
    t.equal(value(families, ATTEMPTS, { outcome: 'retry' }), 1, 'flaky\'s first try')
    t.equal(value(families, ATTEMPTS, { outcome: 'gone' }), 1)
    t.equal(value(families, ATTEMPTS, { outcome: 'failed' }), 0)
    const latency = histogram(families, 'plant_store_webhook_attempt_duration_seconds')
    t.equal(latency.count, 4)
    t.ok(latency.sum > 0)
    t.equal(value(families, 'plant_store_webhook_backlog'), 0, 'nothing left pending')

    // Every request carried a traceparent, each from a span of its own attempt.
    const sent = [...ok.received, ...flaky.received, ...gone.received]
    const parents = sent.map((request) => /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(request.headers.traceparent as string))
    t.ok(parents.every((match) => match !== null), 'a W3C traceparent on every attempt')
    await app.close()
    const spans = collector.spans.filter((span) => span.name === 'webhook attempt')
    t.equal(spans.length, 4)
    for (const match of parents) {
      const span = spans.find((s) => s.spanId === match?.[2])
      t.equal(span?.traceId, match?.[1], 'the traceparent names the attempt\'s span')
    }
    t.same(spans.map((span) => span.attributes['plant_store.webhook.outcome']).sort(), ['gone', 'retry', 'succeeded', 'succeeded'])
    const retried = spans.find((span) => span.attributes['plant_store.webhook.outcome'] === 'retry')
    t.equal(retried?.attributes['http.response.status_code'], 500)
    t.equal(retried?.attributes['plant_store.webhook.attempt'], 1)
  })

  t.test('a backlog: pending deliveries and the age of the oldest, read when scraped', async (t) => {
    const config = loadConfig({
      API_TOKENS: TOKEN,
      LOG_LEVEL: 'silent',
      DATABASE_URL: await databaseUrl(t),
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_RETRY_SCHEDULE: '1h',
      WEBHOOK_TIMEOUT: '1000'
    })
    const store = await openStore(config)
    const app = await buildApp(config, { store })
    t.teardown(() => app.close())
    await app.ready()
    // Answers 503: each delivery waits an hour for its retry, pending.
    const down = await startReceiver(t, (_request, response) => { response.writeHead(503).end() })
    await store.webhooks.createEndpoint({ url: down.origin, secret: makeSecret() })
    for (const id of [1, 2, 3]) t.equal((await postPlant(app, { id, name: 'Fern' })).statusCode, 200)
    await down.waitFor(3)
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const families = await scrape(app)
    t.equal(value(families, 'plant_store_webhook_backlog'), 3)
    const age = value(families, 'plant_store_webhook_oldest_pending_age_seconds')
    t.ok(age >= 1 && age < 30, `the oldest waits for ${age} s`)
    t.equal(value(families, ATTEMPTS, { outcome: 'retry' }), 3)
  })
})

t.test('a store that cannot tell its backlog: the scrape still answers, with the figures it last had', async (t) => {
  const { createMetrics } = await import('../../src/metrics/index.js')
  const { parseExposition, value: read } = await import('../helpers/metrics.js')
  const metrics = createMetrics()
  let answer: () => Promise<{ pending: number, oldest?: Date }> = async () => ({ pending: 5, oldest: new Date(Date.now() - 60_000) })
  metrics.watchBacklog({ backlog: () => answer() })
  const before = parseExposition(await metrics.registry.metrics())
  t.equal(read(before, 'plant_store_webhook_backlog'), 5)
  t.ok(read(before, 'plant_store_webhook_oldest_pending_age_seconds') >= 60)
  answer = async () => { throw new Error('store unavailable') }
  await new Promise((resolve) => setImmediate(resolve))
  const during = parseExposition(await metrics.registry.metrics())
  t.equal(read(during, 'plant_store_webhook_backlog'), 5)
})

t.test('webhook observers together: every one hears each attempt, and their headers all go on the request', async (t) => {
  const { combineWebhookObservers } = await import('../../src/webhooks/observer.js')
  t.equal(combineWebhookObservers(undefined, undefined), undefined, 'none: nothing to call')
  const heard: string[] = []
  const observer = combineWebhookObservers(
    { attempt: () => ({ headers: { a: '1' }, end: (outcome) => heard.push(`one ${outcome.result}`) }) },
    undefined,
    { attempt: () => ({ end: (outcome) => heard.push(`two ${outcome.result}`) }) }
  )
  const watch = observer?.attempt({ id: 'd', endpointId: 'e', url: 'http://x', secrets: [], body: '{}', attempts: 0 })
  t.same(watch?.headers, { a: '1' })
  watch?.end({ result: 'succeeded', status: 200 })
  t.same(heard, ['one succeeded', 'two succeeded'])
})
