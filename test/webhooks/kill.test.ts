import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { TOKEN } from '../helpers/build.js'
import { startReceiver } from '../helpers/receiver.js'
import { exited, startServer } from '../helpers/server.js'
import { forEachStore } from '../helpers/stores.js'
import { postPlants, startInProcess, subscribe, tally, waitUntil } from '../helpers/webhooks.js'

// The real server process, killed with SIGKILL while deliveries are in flight, then restarted.
// The test's receiver answers, then the restarted service delivers what was left.

forEachStore(t, (t, _build, databaseUrl) => {
  async function setUp (t: Test, receiverAnswer: Parameters<typeof startReceiver>[1]) {
    const url = await databaseUrl(t)
    const receiver = await startReceiver(t, receiverAnswer)
    await subscribe(url, `${receiver.origin}/hooks`)
    return { receiver, env: { API_TOKENS: TOKEN, DATABASE_URL: url, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '50ms,100ms,200ms' } }
  }

  t.test('kill -9 mid-delivery, then a restart delivers every plant, a repeat with its webhook-id', async (t) => {
    const { receiver, env } = await setUp(t, async (_, response) => {
      await sleep(50)
      response.writeHead(204).end()
    })
    // A 1 s timeout: the killed process's leases lapse 7 s after it claimed.
    const first = await startServer(t, { ...env, WEBHOOK_TIMEOUT: '1000' })
    const killed = new AbortController()
    const posting = postPlants([first.url], 1, 400, 8, killed.signal)
    await waitUntil('deliveries are under way', () => receiver.received.length >= 30, 30_000)
    first.child.kill('SIGKILL')
    killed.abort()
    await exited(first)
    const acknowledged = await posting
    t.ok(acknowledged.length >= 30, `${acknowledged.length} plants acknowledged before the kill, ${receiver.received.length} delivered`)

    // Restarted (in this process, as the server builds it: a second process start is slow).
    const second = await startInProcess(t, { ...env, WEBHOOK_TIMEOUT: '1000' })
    await waitUntil('every acknowledged plant is delivered', () => acknowledged.every((id) => tally(receiver).plants.has(id)), 30_000)
    await sleep(300)
    const { plants, bodies } = tally(receiver)
    t.same([...plants.values()].filter((ids) => ids.size !== 1), [], 'one webhook-id per plant: a repeat is the same delivery')
    t.same([...bodies.values()].filter((sent) => sent.size !== 1), [], 'each webhook-id always carried the same body')
    t.ok(receiver.received.length >= plants.size, `${receiver.received.length - plants.size} repeats of ${plants.size} deliveries`)
    await second.close()
  })
})
