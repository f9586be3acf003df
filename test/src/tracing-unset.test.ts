import t from 'tap'
import { watchModules } from '../helpers/loaded-modules.js'

// Before the app is imported, so that every module it loads is seen.
const loaded = watchModules()
const { AUTH, build, getPlant, postPlant } = await import('../helpers/build.js')
const { createRequire } = await import('node:module')

const SDK = /[\\/]node_modules[\\/](@opentelemetry[\\/](?!api[\\/])|@fastify[\\/]otel[\\/])/
const API = /[\\/]node_modules[\\/]@opentelemetry[\\/]api[\\/]/

async function traffic (app: Awaited<ReturnType<typeof build>>): Promise<void> {
  t.equal((await postPlant(app, { id: 1, name: 'Fern' })).statusCode, 200)
  t.equal((await getPlant(app, 1)).statusCode, 200)
  await app.inject({ url: '/metrics', headers: AUTH })
}

t.test('no OTLP endpoint: no OpenTelemetry SDK module; only prom-client\'s use of the bare API', async (t) => {
  const app = await build(t)
  await traffic(app)
  const modules = await loaded()
  t.same(modules.filter((url) => SDK.test(url)), [], 'no SDK or exporter')
  // prom-client requires @opentelemetry/api (for exemplars, which are off): with no SDK registered it is a no-op.
  const api = modules.filter((url) => API.test(url))
  const cache = createRequire(import.meta.url).cache
  const entry = api.find((url) => /[\\/]api[\\/]build[\\/]src[\\/]index\.js$/.test(url)) as string
  t.match(cache[entry]?.parent?.filename, /[\\/]node_modules[\\/]prom-client[\\/]/, 'loaded by prom-client, and by nothing else')
  t.notOk(api.some((url) => url.startsWith('file:')), 'never imported as an ES module (our code would)')
})

t.test('with an OTLP endpoint, the SDK is loaded (the watch would see it)', async (t) => {
  const { otlpReceiver } = await import('../helpers/otlp.js')
  const receiver = await otlpReceiver(t)
  const app = await build(t, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })
  t.equal((await getPlant(app, 1)).statusCode, 404)
  const modules = await loaded()
  for (const name of ['@opentelemetry/sdk-trace', '@opentelemetry/otlp-exporter-base', '@opentelemetry/core']) {
    t.ok(modules.some((url) => url.includes(`/node_modules/${name}/`)), name)
  }
})
