import t from 'tap'
import { TOKEN } from '../helpers/build.js'
import { startReceiver } from '../helpers/receiver.js'
import { exited, startServer } from '../helpers/server.js'
import { LEASE_MARGIN } from '../../src/webhooks/sender.js'
import { forEachStore } from '../helpers/stores.js'
import { postPlants, startInProcess, subscribe } from '../helpers/webhooks.js'

// The real server process, killed with SIGKILL while an attempt is in flight: how soon another
// instance (on SQLite, the restarted service) tries the delivery again.

forEachStore(t, (t, _build, databaseUrl) => {
  t.test('after kill -9, a delivery the dead process held is tried again within WEBHOOK_TIMEOUT and a margin', async (t) => {
    let answering = false
    const url = await databaseUrl(t)
    const receiver = await startReceiver(t, (_, response) => { if (answering) response.writeHead(204).end() })
    await subscribe(url, `${receiver.origin}/hooks`)
    const env = { API_TOKENS: TOKEN, DATABASE_URL: url, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '50ms,100ms,200ms' }
    // A lease covers one attempt and the margin, not the attempts that could wait behind it (six times as long).
    const timeout = 5000
    const first = await startServer(t, { ...env, WEBHOOK_TIMEOUT: String(timeout) })
    t.same(await postPlants([first.url], 1, 1, 1), [1])
    const [claimed] = await receiver.waitFor(1)
    first.child.kill('SIGKILL')
    await exited(first)
    answering = true
    // Another instance (on SQLite, the restarted one).
    await startInProcess(t, { ...env, WEBHOOK_TIMEOUT: String(timeout) })
    const [, again] = await receiver.waitFor(2, timeout + LEASE_MARGIN + 10_000)
    t.equal(again.headers['webhook-id'], claimed.headers['webhook-id'], 'the same delivery')
    t.ok(again.at - claimed.at <= timeout + LEASE_MARGIN + 3000, `tried again ${again.at - claimed.at} ms after the dead process's attempt began`)
  })
})
