import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { AUTH, postPlant } from '../helpers/build.js'
import { startReceiver, type Receiver } from '../helpers/receiver.js'
import { forEachStore } from '../helpers/stores.js'
import { waitUntil } from '../helpers/webhooks.js'

// The sender's share of the store's writer: six sequential writers (creates and patches) for a
// while on a fresh service with no endpoint, then with as many as the default limit allows, all
// receiving every event, from a receiver that answers 204 or one that answers 500. Phases take
// turns in one run, so that the load of the machine weighs on all alike.
const WRITERS = 6
const PHASE = 2500
const ROUNDS = 1
const ENDPOINTS = 100
const EVENTS = ['plant.created', 'plant.updated', 'plant.deleted']

/** Writes for `ms` (or `each` writes per writer), WRITERS at a time, each waiting for its answer; how many were acknowledged. */
async function write (app: FastifyInstance, ms: number, each = Infinity): Promise<number> {
  const end = Date.now() + ms
  let done = 0
  await Promise.all(Array.from({ length: WRITERS }, async (_, writer) => {
    for (let i = 0; Date.now() < end && i < each; i++) {
      const id = writer * 1_000_000 + Math.floor(i / 2) + 1
      const response = i % 2 === 0
        ? await postPlant(app, { id, name: `plant ${id}` })
        : await app.inject({ method: 'PATCH', url: `/plants/${id}`, headers: { ...AUTH, 'content-type': 'application/merge-patch+json' }, payload: '{"tag":"patched"}' })
      if (response.statusCode === 200) done++
    }
  }))
  return done
}

async function subscribeAll (app: FastifyInstance, receiver: Receiver): Promise<void> {
  for (let i = 0; i < ENDPOINTS; i++) {
    const response = await app.inject({ method: 'POST', url: '/webhooks', headers: AUTH, payload: { url: `${receiver.origin}/${i}`, events: EVENTS } })
    if (response.statusCode !== 201) throw new Error(response.body)
  }
}

forEachStore(t, (t, build) => {
  t.test(`with ${ENDPOINTS} endpoints receiving every event, healthy or failing, plant writes keep at least half their throughput`, async (t) => {
    const healthy = await startReceiver(t)
    const failing = await startReceiver(t, (_, response) => { response.writeHead(500).end() })
    const receivers = { none: undefined, healthy, failing }
    const writes = { none: 0, healthy: 0, failing: 0 }
    // The first phase warms the code up; it is not counted.
    const phases = ['none', ...Array.from({ length: ROUNDS }, () => ['none', 'healthy', 'failing'] as const).flat()] as const
    for (const [i, mode] of phases.entries()) {
      const app = await build(t, { WEBHOOK_ALLOW_PRIVATE: 'true' })
      const receiver = receivers[mode]
      if (receiver !== undefined) await subscribeAll(app, receiver)
      const done = await write(app, PHASE)
      if (i > 0) writes[mode] += done
      await app.close()
    }
    t.comment(`writes in ${ROUNDS} x ${PHASE} ms: ${writes.none} with no endpoint, ${writes.healthy} with ${ENDPOINTS} healthy, ${writes.failing} with ${ENDPOINTS} failing`)
    t.ok(writes.healthy >= writes.none / 2, `healthy receivers: ${(writes.healthy / writes.none).toFixed(2)} of the throughput`)
    t.ok(writes.failing >= writes.none / 2, `failing receivers: ${(writes.failing / writes.none).toFixed(2)} of the throughput`)
  })
})

forEachStore(t, (t, build) => {
  t.test('deliveries lag while plant writes are made, and catch up once they stop', async (t) => {
    const receiver = await startReceiver(t)
    const app = await build(t, { WEBHOOK_ALLOW_PRIVATE: 'true' })
    await subscribeAll(app, receiver)
    const done = await write(app, Infinity, 2)
    const expected = done * ENDPOINTS
    const lagging = receiver.received.length
    t.ok(lagging < expected, `${lagging} of ${expected} deliveries made while ${done} writes were`)
    const stopped = Date.now()
    await waitUntil('every delivery is made', () => receiver.received.length >= expected, 120_000)
    t.comment(`the other ${expected - lagging} in ${Date.now() - stopped} ms once the writes stopped`)
    await sleep(200)
    t.equal(new Set(receiver.received.map((request) => request.headers['webhook-id'])).size, expected, 'each delivery once')
  })
})
