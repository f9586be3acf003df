import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { openStore } from '../../src/store/index.js'
import { makeSecret } from '../../src/webhooks/signing.js'
import { postPlant, TOKEN } from '../helpers/build.js'
import { freshPostgresUrl, PG_SKIP as skip } from '../helpers/postgres.js'
import { startReceiver } from '../helpers/receiver.js'
import { startProxy } from '../helpers/proxy.js'
import { startInProcess, tally, waitUntil } from '../helpers/webhooks.js'

interface Line { level: number, msg: string }

t.test('a PostgreSQL outage pauses the sender quietly; it resumes by itself and delivers what waited', { skip }, async (t) => {
  const base = new URL(await freshPostgresUrl(t) as string)
  const proxy = await startProxy(t, base.href)
  const url = new URL(proxy.url)

  // The first attempt for plant 2 fails, so it is still pending when the database goes away.
  let plant2 = 0
  const receiver = await startReceiver(t, (request, response) => {
    const isPlant2 = request.body.toString() === '{"id":2,"name":"Across the outage"}'
    if (isPlant2) plant2++
    response.writeHead(isPlant2 && plant2 === 1 ? 500 : 204).end()
  })
  const direct = await openStore({ databaseUrl: base.href, sqliteSynchronous: 'normal', databasePoolSize: 1, databaseTimeout: 2000 })
  t.teardown(() => direct.close())
  const endpoint = await direct.webhooks.createEndpoint({ url: receiver.origin, secret: makeSecret() })

  const log: string[] = []
  const app = await startInProcess(t, {
    API_TOKENS: TOKEN,
    LOG_LEVEL: 'info',
    DATABASE_URL: url.href,
    DATABASE_TIMEOUT: '1000',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_TIMEOUT: '1000',
    WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s'
  }, log)
  const lines = (): Line[] => log.map((line) => JSON.parse(line) as Line).filter((line) => /webhook sender/.test(line.msg) || line.level >= 50)

  t.equal((await postPlant(app, { id: 1, name: 'Before' })).statusCode, 200)
  await receiver.waitFor(1)
  t.equal((await postPlant(app, { id: 2, name: 'Across the outage' })).statusCode, 200)
  await receiver.waitFor(2)

  await proxy.cut()
  await sleep(2500)
  t.same(lines().map((line) => [line.level, line.msg]), [[30, 'webhook sender paused: the store is unavailable']], 'one line for the whole outage, and no error')

  await proxy.restore()
  await waitUntil('resumed', () => lines().some((line) => line.msg === 'webhook sender resumed'), 10_000)
  t.equal((await postPlant(app, { id: 3, name: 'After' })).statusCode, 200)
  await waitUntil('every plant delivered with a 2xx', async () =>
    (await direct.webhooks.listDeliveries(endpoint.id, { limit: 10 }))?.every((delivery) => delivery.status === 'succeeded') === true &&
    tally(receiver).plants.size === 3, 15_000)
  t.ok(plant2 >= 2, `plant 2 was tried again after the outage (${plant2} attempts)`)
  t.equal(tally(receiver).plants.get(2)?.size, 1, 'with its webhook-id')
  t.same(lines().map((line) => line.msg), ['webhook sender paused: the store is unavailable', 'webhook sender resumed'])
})
