import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { openStore } from '../../../src/store/index.js'
import type { EventFeed } from '../../../src/store/feed-types.js'
import type { PlantStore } from '../../../src/store/types.js'
import { FEED_PRUNE_CHUNK } from '../../../src/store/feed-common.js'
import { forEachStore } from '../../helpers/stores.js'

const ALL = 0b111

// The feed's half of the store port, on each store: the prune's chunks and the wake-up across instances.
forEachStore(t, (t, _build, databaseUrl) => {
  async function open (t: Parameters<typeof databaseUrl>[0], url: string): Promise<PlantStore & { events: EventFeed }> {
    const store = await openStore({ databaseUrl: url, sqliteSynchronous: 'normal', databasePoolSize: 4, databaseTimeout: 30_000, eventsRetention: 60_000 })
    t.teardown(() => store.close())
    t.ok(store.events, 'the feed is on')
    return store as PlantStore & { events: EventFeed }
  }

  t.test('a prune of more than a chunk goes chunk by chunk, and keeps the newest event', async (t) => {
    const store = await open(t, await databaseUrl(t))
    const count = 2 * FEED_PRUNE_CHUNK + 500
    for (let i = 0; i < count; i += 500) {
      await Promise.all(Array.from({ length: 500 }, (_, j) => store.create({ id: BigInt(i + j), name: `p${i + j}` })))
    }
    const { end } = await store.events.end()
    t.equal((await store.events.read({ limit: count, types: ALL })).events.length, count, 'every create wrote its event')

    t.equal(await store.events.prune(new Date(Date.now() + 60_000)), count - 1, 'all but the newest dropped')
    t.same(await store.events.end(), { end, floor: end }, 'the floor is the end')
    t.same((await store.events.read({ limit: 10, types: ALL })).events, [], 'nothing left to read')
    t.equal(await store.events.prune(new Date(Date.now() + 60_000)), 0, 'a second prune has nothing to do')
  })

  t.test('a change no endpoint receives wakes the feed, not the sender; one an endpoint receives wakes both', async (t) => {
    const url = await databaseUrl(t)
    const [here, elsewhere] = [await open(t, url), await open(t, url)]
    const heard = { feed: 0, sender: 0, otherFeed: 0, otherSender: 0 }
    const leave = [
      here.events.onCommit(() => { heard.feed++ }),
      here.webhooks.onDeliveries(() => { heard.sender++ }),
      elsewhere.events.onCommit(() => { heard.otherFeed++ }),
      elsewhere.webhooks.onDeliveries(() => { heard.otherSender++ })
    ]
    t.teardown(() => { for (const stop of leave) stop() })
    const settled = async (): Promise<void> => { await sleep(300) }
    await settled()
    Object.assign(heard, { feed: 0, sender: 0, otherFeed: 0, otherSender: 0 })

    await here.create({ id: 1n, name: 'for the feed' })
    await here.update(1n, { name: 'renamed' })
    await here.delete(1n)
    await settled()
    t.ok(heard.feed > 0 && heard.otherFeed > 0, `the feed's listeners are woken here and elsewhere (${heard.feed}, ${heard.otherFeed})`)
    t.same([heard.sender, heard.otherSender], [0, 0], 'no sender is woken: there is nothing to deliver')

    await here.webhooks.createEndpoint({ url: 'https://receiver.example/hook', secret: 'whsec_AAAA' })
    await settled()
    Object.assign(heard, { feed: 0, sender: 0, otherFeed: 0, otherSender: 0 })
    await here.create({ id: 2n, name: 'for an endpoint' })
    await settled()
    t.ok(heard.sender > 0, `with an endpoint, the sender is woken (${heard.sender})`)
    // PostgreSQL notifies every instance; a SQLite sender in another process finds the deliveries at its next poll.
    if (url.startsWith('postgres')) t.ok(heard.otherSender > 0, `and the other instance's sender (${heard.otherSender})`)
    t.ok(heard.feed > 0 && heard.otherFeed > 0, 'and the feed\'s listeners')
  })

  t.test('a commit of another instance on the same database wakes a listener; one that left is not called', async (t) => {
    const url = await databaseUrl(t)
    const [waiting, writing] = [await open(t, url), await open(t, url)]
    let calls = 0
    let wakeUp = (): void => {}
    const woken = new Promise<string>((resolve) => { wakeUp = () => resolve('woken') })
    const leave = waiting.events.onCommit(() => { calls++; wakeUp() })
    const other = waiting.events.onCommit(() => {})
    // Quiet ticks first: nothing committed, nothing called.
    await sleep(100)
    t.equal(calls, 0, 'no commit, no call')
    await writing.create({ id: 1n, name: 'elsewhere' })
    t.equal(await Promise.race([woken, sleep(5000, 'not woken')]), 'woken', 'woken by the other instance\'s commit')

    leave()
    leave()
    other()
    const before = calls
    await writing.create({ id: 2n, name: 'unheard' })
    await sleep(300)
    t.equal(calls, before, 'a listener that left is not called')
  })
})
