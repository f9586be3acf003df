import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { TOKEN } from '../helpers/build.js'
import { startReceiver } from '../helpers/receiver.js'
import { exited, startServer } from '../helpers/server.js'
import { openStore } from '../../src/store/index.js'
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
    // A 1 s timeout: the killed process's leases lapse 6 s after they were last renewed.
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

forEachStore(t, (t, _build, databaseUrl) => {
  t.test('kill -9 after a burst of acknowledged PATCHes and DELETEs: no change and no event lost', async (t) => {
    const url = await databaseUrl(t)
    const receiver = await startReceiver(t)
    const store = await openStore({ databaseUrl: url, sqliteSynchronous: 'normal', databasePoolSize: 2, databaseTimeout: 5000 })
    for (let i = 1; i <= 400; i += 100) await Promise.all(Array.from({ length: 100 }, (_, j) => store.create({ id: BigInt(i + j), name: `plant ${i + j}` })))
    await store.close()
    await subscribe(url, `${receiver.origin}/events`, ['plant.created', 'plant.updated', 'plant.deleted'])
    const env = { API_TOKENS: TOKEN, DATABASE_URL: url, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '50ms,100ms,200ms', WEBHOOK_TIMEOUT: '1000' }
    const first = await startServer(t, env)

    // Every third plant deleted, the others renamed, 8 clients at once, until the kill.
    const acknowledged = { updated: [] as number[], deleted: [] as number[] }
    let next = 1
    const killed = new AbortController()
    const burst = Promise.all(Array.from({ length: 8 }, async () => {
      while (next <= 400 && !killed.signal.aborted) {
        const id = next++
        const deleting = id % 3 === 0
        try {
          const response = await fetch(`${first.url}/plants/${id}`, deleting
            ? { method: 'DELETE', headers: { authorization: `Bearer ${TOKEN}` } }
            : { method: 'PATCH', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/merge-patch+json' }, body: JSON.stringify({ name: `renamed ${id}` }) })
          if (response.status === (deleting ? 204 : 200)) acknowledged[deleting ? 'deleted' : 'updated'].push(id)
        } catch {
          // The process died under this request: it was never acknowledged.
        }
      }
    }))
    await waitUntil('changes are acknowledged and events delivered', () => acknowledged.updated.length >= 40 && receiver.received.length >= 20, 30_000)
    first.child.kill('SIGKILL')
    killed.abort()
    await exited(first)
    await burst
    t.ok(acknowledged.deleted.length > 10, `${acknowledged.updated.length} patches and ${acknowledged.deleted.length} deletes acknowledged before the kill`)

    const second = await startInProcess(t, env)
    const events = () => receiver.received.map((r) => JSON.parse(r.body.toString()) as { type: string, data: { id: number, name?: string } })
    const heard = (type: string, id: number) => events().some((e) => e.type === type && e.data.id === id && (type === 'plant.deleted' || e.data.name === `renamed ${id}`))
    await waitUntil('an event for every acknowledged change', () =>
      acknowledged.updated.every((id) => heard('plant.updated', id)) && acknowledged.deleted.every((id) => heard('plant.deleted', id)), 30_000)
    for (const id of acknowledged.updated) t.equal((await second.inject({ url: `/plants/${id}`, headers: { authorization: `Bearer ${TOKEN}` } })).json().name, `renamed ${id}`)
    for (const id of acknowledged.deleted) t.equal((await second.inject({ url: `/plants/${id}`, headers: { authorization: `Bearer ${TOKEN}` } })).statusCode, 404)
    // No event without its change: each one tells of a change the store kept.
    for (const event of events()) {
      const found = await second.inject({ url: `/plants/${event.data.id}`, headers: { authorization: `Bearer ${TOKEN}` } })
      if (event.type === 'plant.deleted') t.equal(found.statusCode, 404, `deleted ${event.data.id}`)
      else t.equal(found.json().name, `renamed ${event.data.id}`, `updated ${event.data.id}`)
    }
    t.same(events().filter((e) => e.type === 'plant.created'), [], 'no create was made')
    await second.close()
  })
})
