import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { verifyWebhook } from '../../src/client/verify-webhook.js'
import { AUTH, assertError, patchPlant, postPlant } from '../helpers/build.js'
import { startReceiver } from '../helpers/receiver.js'
import { forEachStore } from '../helpers/stores.js'

const JSON_HEADERS = { ...AUTH, 'content-type': 'application/json' }
const ALL = ['plant.created', 'plant.updated', 'plant.deleted']

async function register (app: FastifyInstance, payload: object) {
  return await app.inject({ method: 'POST', url: '/webhooks', headers: JSON_HEADERS, payload })
}

forEachStore(t, (t, build) => {
  t.test('events: a non-empty array of the three types, unique; null returns an endpoint to the default', async (t) => {
    const app = await build(t)
    for (const events of [[], ['plant.moved'], ['plant.created', 'plant.created'], 'plant.created', [...ALL, 'plant.created'], null, [1]]) {
      assertError(t, await register(app, { url: 'https://a.example/', events }), 400, /^body\/events/)
    }
    const created = await register(app, { url: 'https://a.example/', events: ['plant.deleted', 'plant.created'] })
    t.equal(created.statusCode, 201)
    t.same(created.json().events, ['plant.created', 'plant.deleted'])
    const id = created.json().id
    t.same((await app.inject({ url: `/webhooks/${id}`, headers: AUTH })).json().events, ['plant.created', 'plant.deleted'])
    const patch = (payload: object) => app.inject({ method: 'PATCH', url: `/webhooks/${id}`, headers: JSON_HEADERS, payload })
    t.same((await patch({ events: ['plant.updated'] })).json().events, ['plant.updated'])
    t.same((await patch({ description: 'kept' })).json().events, ['plant.updated'], 'left out: kept')
    for (const events of [[], ['nope'], ['plant.updated', 'plant.updated']]) assertError(t, await patch({ events }), 400, /^body\/events/)
    const reset = await patch({ events: null })
    t.equal(reset.statusCode, 200)
    t.notOk('events' in reset.json(), 'null: back to the default, no events')
    t.notOk('events' in (await register(app, { url: 'https://b.example/' })).json(), 'absent when not given')
  })

  t.test('each change goes to the endpoints that receive its type: typed payloads with events, the origin body without', async (t) => {
    const app = await build(t, { WEBHOOK_ALLOW_PRIVATE: 'true' })
    const receiver = await startReceiver(t)
    const typed = (await register(app, { url: `${receiver.origin}/typed`, events: ALL })).json()
    const deletes = (await register(app, { url: `${receiver.origin}/deletes`, events: ['plant.deleted'] })).json()
    const origin = (await register(app, { url: `${receiver.origin}/origin` })).json()

    t.equal((await postPlant(app, '{"id":9007199254740993,"name":"Fern","tag":"shade"}')).statusCode, 200)
    t.equal((await postPlant(app, '{"id":9007199254740993,"name":"Fern","tag":"shade"}')).statusCode, 200, 'a replay')
    const renamed = await patchPlant(app, '9007199254740993', { name: 'Fern II', tag: null })
    t.equal(renamed.statusCode, 200)
    t.equal((await patchPlant(app, '9007199254740993', { name: 'Fern II' })).statusCode, 200, 'a patch that changes nothing')
    const refused = await app.inject({ method: 'PATCH', url: '/plants/9007199254740993', headers: { ...JSON_HEADERS, 'if-match': '"not-it"' }, payload: { name: 'X' } })
    t.equal(refused.statusCode, 412)
    t.equal((await app.inject({ method: 'DELETE', url: '/plants/9007199254740993', headers: { ...AUTH, 'if-match': '"not-it"' } })).statusCode, 412)
    t.equal((await app.inject({ method: 'DELETE', url: '/plants/9007199254740993', headers: AUTH })).statusCode, 204)
    t.equal((await postPlant(app, '{"id":9007199254740993,"name":"Again"}')).statusCode, 200, 'created again')

    const received = await receiver.waitFor(7)
    await sleep(300)
    t.equal(receiver.received.length, 7, 'nothing for the replay, the unchanged patch or the 412s')
    const bodies = (path: string) => received.filter((r) => r.url === path)
    const events = bodies('/typed').map((r) => verifyWebhook(typed.secret, r.headers, r.body, { events: true }))
    const byType = events.map((e) => [e.type, e.data]).sort((a, b) => String(a[0]).localeCompare(String(b[0])) || String(JSON.stringify(a[1], (_, v) => typeof v === 'bigint' ? String(v) : v)).localeCompare(JSON.stringify(b[1], (_, v) => typeof v === 'bigint' ? String(v) : v)))
    t.same(byType, [
      ['plant.created', { id: 9007199254740993n, name: 'Again' }],
      ['plant.created', { id: 9007199254740993n, name: 'Fern', tag: 'shade' }],
      ['plant.deleted', { id: 9007199254740993n }],
      ['plant.updated', { id: 9007199254740993n, name: 'Fern II' }]
    ])
    for (const event of events) t.match(event.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, 'an RFC 3339 commit time')
    t.match(bodies('/typed')[0].body.toString(), /"id":9007199254740993[,}]/, 'the id exact in the JSON')
    t.same(bodies('/deletes').map((r) => verifyWebhook(deletes.secret, r.headers, r.body, { events: true }).data), [{ id: 9007199254740993n }])
    t.same(bodies('/origin').map((r) => r.body.toString()).sort(), ['{"id":9007199254740993,"name":"Again"}', '{"id":9007199254740993,"name":"Fern","tag":"shade"}'],
      'without events: plant.created only, in the origin body')

    const listed = (await app.inject({ url: `/webhooks/${typed.id}/deliveries`, headers: AUTH })).json()
    t.same(listed.map((d: { type: string }) => d.type).sort(), ['plant.created', 'plant.created', 'plant.deleted', 'plant.updated'], 'deliveries list their type')
    t.match((await app.inject({ url: `/webhooks/${typed.id}/deliveries`, headers: AUTH })).body, /"plantId":9007199254740993[,}]/)
    t.same((await app.inject({ url: `/webhooks/${origin.id}/deliveries`, headers: AUTH })).json().map((d: { type: string }) => d.type), ['plant.created', 'plant.created'])
  })
})
