import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import Fastify from 'fastify'
import t from 'tap'
import webhookSender, { type WebhookSenderOptions } from '../../plugins/webhook-sender.js'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config/index.js'
import { openSqliteStore } from '../../src/store/sqlite/index.js'
import { makeSecret } from '../../src/webhooks/signing.js'
import { postPlant, TOKEN } from '../helpers/build.js'
import { startReceiver } from '../helpers/receiver.js'

t.test('options are checked when the plugin is registered', async (t) => {
  const store = openSqliteStore({ path: ':memory:' })
  t.teardown(() => store.close())
  const good: WebhookSenderOptions = { store: store.webhooks, allowPrivate: false, timeout: 1000, schedule: [10, 20], retention: 1000 }
  const bad: Array<[Partial<WebhookSenderOptions> & Record<string, unknown>, RegExp]> = [
    [{ store: undefined }, /the store option must be a WebhookStore/],
    [{ store: {} as never }, /the store option must be a WebhookStore/],
    [{ timeout: 0 }, /timeout must be a positive number/],
    [{ retention: -1 }, /retention must be a positive number/],
    [{ perEndpoint: Number.NaN }, /perEndpoint must be a positive number/],
    [{ total: '4' as never }, /total must be a positive number/],
    [{ grace: Infinity }, /grace must be a positive number/],
    [{ schedule: '5s' as never }, /schedule must be a list of delays/],
    [{ schedule: [10, -1] }, /schedule must be a list of delays/]
  ]
  for (const [change, message] of bad) {
    const app = Fastify()
    await t.rejects(async () => { await app.register(webhookSender, { ...good, ...change } as WebhookSenderOptions) }, message, JSON.stringify(change))
    await app.close()
  }
  const app = Fastify()
  await app.register(webhookSender, good)
  await app.ready()
  await app.close()
})

t.test('in the app: sends from ready to close, and finishes its attempts before the store closes', async (t) => {
  const path = join(t.testdir(), 'plants.db')
  const store = openSqliteStore({ path })
  const lines: string[] = []
  const config = loadConfig({ API_TOKENS: TOKEN, LOG_LEVEL: 'info', DATABASE_URL: 'sqlite:/nonexistent/never/opened.db', WEBHOOK_ALLOW_PRIVATE: 'true' })
  const app = await buildApp(config, { store, logStream: { write: (line: string) => { lines.push(line) } } })
  const receiver = await startReceiver(t, async (_, response) => {
    await sleep(300)
    response.writeHead(204).end()
  })
  const endpoint = await store.webhooks.createEndpoint({ url: `${receiver.origin}/hook`, secret: makeSecret() })
  await app.ready()
  t.equal((await postPlant(app, '{"id":9007199254740993,"name":"Monstera"}')).statusCode, 200)
  const [request] = await receiver.waitFor(1)
  t.equal(request.body.toString(), '{"id":9007199254740993,"name":"Monstera"}', 'the exact body, the id beyond 2^53 exact')
  await app.close()
  t.notOk(lines.some((line) => JSON.parse(line).level >= 50), 'nothing failed on the way down')

  // The attempt in flight at close was recorded before the store closed.
  const reopened = openSqliteStore({ path })
  t.teardown(() => reopened.close())
  t.match(await reopened.webhooks.listDeliveries(endpoint.id, { limit: 5 }), [{ status: 'succeeded', attempts: 1, lastStatus: 204 }])
})
