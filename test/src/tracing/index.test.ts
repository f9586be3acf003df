import t from 'tap'
import { startTracing } from '../../../src/tracing/index.js'
import { otlpReceiver } from '../../helpers/otlp.js'

const log = { warn: () => {}, error: () => {}, info: () => {} }

t.test('a webhook attempt\'s span names the receiver\'s port, its scheme\'s when the URL has none, and why it failed', async (t) => {
  const receiver = await otlpReceiver(t)
  const tracing = startTracing({ url: `${receiver.url}/v1/traces`, protocol: 'http/json', serviceName: 'test', sampler: { name: 'always_on', ratio: 1 } }, 'sqlite', log)
  const delivery = { id: 'msg_1', endpointId: 'ep_1', url: 'https://hooks.example/in', body: '{}', attempts: 0, secrets: [] }
  const watch = tracing.webhooks.attempt(delivery as never)
  t.match(watch.headers?.traceparent, /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/)
  watch.end({ result: 'failed', error: 'getaddrinfo ENOTFOUND hooks.example' })
  tracing.webhooks.attempt({ ...delivery, url: 'http://hooks.example/in' } as never).end({ result: 'failed', status: 500 })
  t.equal(tracing.store.batch?.(2, [{}, { origin: {} }]), undefined, 'a batch that carried no traced request has no span')
  await tracing.close()
  t.match(receiver.spans.map((span) => span.attributes), [
    { 'server.address': 'hooks.example', 'server.port': 443, 'error.type': '_OTHER', 'plant_store.webhook.outcome': 'failed' },
    { 'server.port': 80, 'error.type': '500', 'http.response.status_code': 500 }
  ])
  t.equal(receiver.spans.length, 2)
})

t.test('a webhook attempt the sampler does not record: no span, and a traceparent that says so', async (t) => {
  const receiver = await otlpReceiver(t)
  const tracing = startTracing({ url: `${receiver.url}/v1/traces`, protocol: 'http/json', serviceName: 'test', sampler: { name: 'always_off', ratio: 1 } }, 'sqlite', log)
  const watch = tracing.webhooks.attempt({ id: 'msg_1', endpointId: 'ep_1', url: 'http://hooks.example/in', body: '{}', attempts: 0, secrets: [] } as never)
  t.match(watch.headers?.traceparent, /^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/)
  watch.end({ result: 'succeeded', status: 204 })
  await tracing.close()
  t.equal(receiver.requests.length, 0, 'nothing to export')
})
