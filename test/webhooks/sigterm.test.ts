import t, { type Test } from 'tap'
import { TOKEN } from '../helpers/build.js'
import { startReceiver } from '../helpers/receiver.js'
import { exited, startServer } from '../helpers/server.js'
import { forEachStore } from '../helpers/stores.js'
import { postPlants, startInProcess, subscribe, tally } from '../helpers/webhooks.js'

// The real server process, stopped with SIGTERM while attempts are in flight, then restarted.

forEachStore(t, (t, _build, databaseUrl) => {
  async function setUp (t: Test, receiverAnswer: Parameters<typeof startReceiver>[1]) {
    const url = await databaseUrl(t)
    const receiver = await startReceiver(t, receiverAnswer)
    await subscribe(url, `${receiver.origin}/hooks`)
    return { receiver, env: { API_TOKENS: TOKEN, DATABASE_URL: url, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '50ms,100ms,200ms' } }
  }

  t.test('SIGTERM ends the attempts in flight after the grace period and hands their deliveries back at once', async (t) => {
    let answering = false
    const { receiver, env } = await setUp(t, (_, response) => { if (answering) response.writeHead(204).end() })
    // A 20 s timeout: leases of 25 s, which only a hand-back can beat.
    const first = await startServer(t, { ...env, WEBHOOK_TIMEOUT: '20000' })
    // Four attempts in flight (the bound per endpoint), two more claimed behind them.
    t.same((await postPlants([first.url], 1, 6, 6)).sort(), [1, 2, 3, 4, 5, 6])
    await receiver.waitFor(4)
    const inFlight = receiver.received.map((request) => request.headers['webhook-id'])
    const stopping = Date.now()
    first.child.kill('SIGTERM')
    const { code } = await exited(first)
    t.equal(code, 0, 'a clean exit')
    t.ok(Date.now() - stopping < 9000, `within the grace period (${Date.now() - stopping} ms)`)
    t.match(first.stdout(), /"msg":"store closed"/)
    t.equal(receiver.received.length, 4, 'nothing more was started on the way down')

    answering = true
    const restarted = Date.now()
    // Restarted in this process, as the server builds it.
    await startInProcess(t, { ...env, WEBHOOK_TIMEOUT: '20000' })
    // The four cut off come again, and the two that never started come for the first time.
    await receiver.waitFor(10, 10_000)
    t.ok(Date.now() - restarted < 10_000, `delivered ${Date.now() - restarted} ms after the restart, not after the lease`)
    const { plants } = tally(receiver)
    t.same([...plants.values()].map((ids) => ids.size), [1, 1, 1, 1, 1, 1], 'one webhook-id per plant')
    t.same(inFlight.filter((id) => receiver.received.filter((request) => request.headers['webhook-id'] === id).length !== 2), [], 'the four cut off came again with their webhook-ids')
  })
})
