import t from 'tap'
import { AUTH, postPlant } from '../helpers/build.js'
import { startReceiver } from '../helpers/receiver.js'
import { forEachStore } from '../helpers/stores.js'
import { waitUntil } from '../helpers/webhooks.js'

// WEBHOOK_DISABLE_AFTER, through the API: an endpoint that fails every attempt is disabled, and the endpoint says so.
forEachStore(t, (t, build) => {
  t.test('an endpoint failing every attempt for WEBHOOK_DISABLE_AFTER is disabled, and its resource says why', async (t) => {
    const receiver = await startReceiver(t, (_, response) => { response.writeHead(500).end() })
    const app = await build(t, { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '100ms,100ms,100ms,100ms,100ms,100ms,100ms,100ms', WEBHOOK_DISABLE_AFTER: '300ms' })
    const created = await app.inject({ method: 'POST', url: '/webhooks', headers: AUTH, payload: { url: `${receiver.origin}/in` } })
    const { id } = created.json<{ id: string }>()
    t.equal((await postPlant(app, { id: 1, name: 'never taken' })).statusCode, 200)
    const endpoint = async () => (await app.inject({ url: `/webhooks/${id}`, headers: AUTH })).json<{ enabled: boolean, disabledAt?: string, disabledReason?: string }>()
    await waitUntil('disabled', async () => !(await endpoint()).enabled, 20_000)
    t.match(await endpoint(), { enabled: false, disabledAt: /^\d{4}-/, disabledReason: /WEBHOOK_DISABLE_AFTER/ })
    const [delivery] = (await app.inject({ url: `/webhooks/${id}/deliveries`, headers: AUTH })).json<Array<{ status: string }>>()
    t.equal(delivery.status, 'failed', 'its pending delivery cancelled')
    const enabled = await app.inject({ method: 'PATCH', url: `/webhooks/${id}`, headers: AUTH, payload: { enabled: true } })
    t.notOk('disabledReason' in enabled.json(), 'enabled again: the reason goes')
  })
})
