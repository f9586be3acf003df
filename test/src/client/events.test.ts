import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { createClient, type PlantStoreClient } from '../../../src/client/index.js'
import type { FeedEvent } from '../../../schemas/index.js'
import { build, sqliteUrl, TOKEN } from '../../helpers/build.js'

const BIG = 2n ** 63n - 1n

async function service (t: Test): Promise<PlantStoreClient> {
  const app = await build(t, { DATABASE_URL: sqliteUrl(t) })
  await app.listen({ port: 0, host: '127.0.0.1' })
  return createClient({ baseUrl: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, token: TOKEN, retries: 0 })
}

/** Reads `count` events of a follower, then leaves it: the events and the follower's cursor. */
async function take (follower: ReturnType<PlantStoreClient['events']['follow']>, count: number): Promise<{ events: FeedEvent[], cursor: string | undefined }> {
  const events: FeedEvent[] = []
  for await (const event of follower) {
    events.push(event)
    if (events.length === count) break
  }
  return { events, cursor: follower.cursor }
}

const ids = (events: FeedEvent[]): string[] => events.map(({ type, data }) => `${type} ${data.id}`)

t.test('follow: commit order in pages, a cursor that resumes inside a page, exact ids', async (t) => {
  const client = await service(t)
  for (const id of [1n, 2n, 3n, BIG, -BIG]) await client.create({ id, name: `p${id}` })
  const signal = AbortSignal.timeout(20_000)

  const first = await take(client.events.follow({ limit: 2, signal }), 3)
  t.same(ids(first.events), ['plant.created 1', 'plant.created 2', 'plant.created 3'])
  t.match(first.cursor, /^[A-Za-z0-9_-]+\.1$/, 'the third event is the first of the second page: its cursor points inside it')

  const rest = await take(client.events.follow({ after: first.cursor, limit: 2, signal }), 2)
  t.same(ids(rest.events), [`plant.created ${BIG}`, `plant.created ${-BIG}`], 'resumed after the third, ids exact')
  t.equal(rest.events[0].data.id, BIG)
})

t.test('follow from now sees only what commits after; types filter', async (t) => {
  const client = await service(t)
  await client.create({ id: 1n, name: 'before' })
  const after = await client.events.now()
  const signal = AbortSignal.timeout(20_000)
  const all = take(client.events.follow({ after, signal, wait: 5 }), 2)
  const deletes = client.events.follow({ after: 'now', types: ['plant.deleted'], signal, wait: 5 })
  const deleted = take(deletes, 1)
  // `now` is made a position before the follower waits.
  for (const deadline = Date.now() + 10_000; deletes.cursor === 'now' && Date.now() < deadline;) await new Promise((resolve) => setTimeout(resolve, 5))
  t.not(deletes.cursor, 'now', 'the follower holds a position')
  await client.create({ id: 2n, name: 'after' })
  await client.delete(1n)
  t.same(ids((await all).events), ['plant.created 2', 'plant.deleted 1'])
  t.same(ids((await deleted).events), ['plant.deleted 1'])
})

t.test('follow refuses a cursor that is not one, before any request', async (t) => {
  const client = await service(t)
  t.throws(() => client.events.follow({ after: 'not a cursor!' }), TypeError)
  t.throws(() => client.events.follow({ after: 'abc.0' }), TypeError)
})

t.test('an answer that is not the feed is an error, not an event', async (t) => {
  const bodies = ['{"plants":[]}', '[]']
  let served = 0
  const server = createServer((_, response) => {
    // The first answer is not a list; the second a list without a next link.
    response.writeHead(200, { 'content-type': 'application/json' }).end(bodies[served++ % 2])
  }).listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const client = createClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: TOKEN, retries: 0 })
  for (let i = 0; i < 2; i++) {
    await t.rejects(take(client.events.follow({ wait: 1 }), 1), { name: 'PlantStoreError', message: /not the answer this operation gives/ })
  }
  await t.rejects(client.events.now(), /not the answer this operation gives/, 'now without a next link')
})
