import { setTimeout as sleep } from 'node:timers/promises'
import Database from 'better-sqlite3'
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config/index.js'
import { openStore } from '../../src/store/index.js'
import type { EventFeed } from '../../src/store/feed-types.js'
import { AUTH, TOKEN, assertError, build as buildOn, postPlant, patchPlant, sqliteUrl } from '../helpers/build.js'
import { change, readAll, readEvents } from '../helpers/events.js'
import { bearer, INSUFFICIENT, scopedTokensFile } from '../helpers/scopes.js'
import { forEachStore } from '../helpers/stores.js'
import { WAKE_MS } from '../../plugins/events/waiting.js'

const del = (app: Parameters<typeof postPlant>[0], id: string) => app.inject({ method: 'DELETE', url: `/plants/${id}`, headers: AUTH })

forEachStore(t, (t, build, databaseUrl) => {
  t.test('every change in commit order, a page at a time, with a next link always', async (t) => {
    const app = await build(t)
    let first = await readEvents(app, '/events')
    t.same([first.res.statusCode, first.events], [200, []], 'none yet: []')
    t.match(first.res.headers['content-type'], /^application\/json; charset=utf-8$/)
    t.match(first.next, /^\/events\?after=[A-Za-z0-9_-]+&limit=100$/, 'and a next link')

    t.equal((await postPlant(app, '{"id":9007199254740993,"name":"fern","tag":"green"}')).statusCode, 200)
    t.equal((await postPlant(app, '{"id":9007199254740993,"name":"fern","tag":"green"}')).statusCode, 200, 'a replay')
    t.equal((await postPlant(app, '{"id":-9223372036854775808,"name":"moss"}')).statusCode, 200)
    t.equal((await patchPlant(app, '9007199254740993', { tag: null })).statusCode, 200)
    t.equal((await patchPlant(app, '9007199254740993', { tag: null })).statusCode, 200, 'a patch that changes nothing')
    t.equal((await del(app, '-9223372036854775808')).statusCode, 204)
    const changes = [
      'plant.created {"id":"9007199254740993","name":"fern","tag":"green"}',
      'plant.created {"id":"-9223372036854775808","name":"moss"}',
      'plant.updated {"id":"9007199254740993","name":"fern"}',
      'plant.deleted {"id":"-9223372036854775808"}'
    ]

    const all = await readAll(app, '/events?limit=3')
    t.same(all.pages, [3, 1, 0], 'pages of the limit, then the rest, then empty')
    t.same(all.events.map(change), changes, 'each change once, in order; the replay and the no-op wrote none')
    t.ok(all.events.every((event) => Object.keys(event).join() === 'id,type,timestamp,data'), 'exactly {id, type, timestamp, data}')
    t.equal(new Set(all.events.map((event) => event.id)).size, 4, 'ids unique')
    t.ok(all.events.every((event) => typeof event.id === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(event.timestamp)), 'string ids, RFC 3339 times')
    const raw = await app.inject({ url: '/events', headers: AUTH })
    t.match(raw.body, /"data":\{"id":9007199254740993,"name":"fern","tag":"green"\}/, 'plant ids are exact JSON integers')

    const empty = await readEvents(app, all.next)
    t.same([empty.events, empty.next], [[], all.next], 'an empty page links to the same position')
    t.equal((await postPlant(app, '{"id":5,"name":"ivy"}')).statusCode, 200)
    t.same((await readEvents(app, all.next)).events.map(change), ['plant.created {"id":"5","name":"ivy"}'], 'following it finds the next change')

    first = await readEvents(app, '/events?limit=2')
    t.same(first.events.map(change), changes.slice(0, 2), 'without after: from the oldest kept')
  })

  t.test('types filters, and the next position passes the events left out', async (t) => {
    const app = await build(t)
    for (const id of [1, 2, 3]) await postPlant(app, { id, name: `p${id}` })
    await del(app, '2')
    await patchPlant(app, 3, { name: 'three' })
    const deleted = await readAll(app, '/events?types=plant.deleted')
    t.same(deleted.events.map(change), ['plant.deleted {"id":"2"}'])
    t.match(deleted.next, /&types=plant\.deleted$/, 'the link keeps the filter')
    const both = await readAll(app, '/events?types=plant.updated,plant.deleted&limit=1')
    t.same(both.events.map(change), ['plant.deleted {"id":"2"}', 'plant.updated {"id":"3","name":"three"}'])
    await postPlant(app, { id: 4, name: 'p4' })
    t.same((await readEvents(app, deleted.next)).events, [], 'a create is not a delete')
    await del(app, '4')
    t.same((await readEvents(app, deleted.next)).events.map(change), ['plant.deleted {"id":"4"}'])
  })

  t.test('after=now starts at the current end, without history', async (t) => {
    const app = await build(t)
    await postPlant(app, { id: 1, name: 'old' })
    const now = await readEvents(app, '/events?after=now&limit=10')
    t.same([now.res.statusCode, now.events], [200, []])
    t.match(now.next, /^\/events\?after=[A-Za-z0-9_-]+&limit=10$/, 'a cursor, not now')
    await postPlant(app, { id: 2, name: 'new' })
    t.same((await readEvents(app, now.next)).events.map(change), ['plant.created {"id":"2","name":"new"}'])
  })

  t.test('bad parameters and cursors are a 400 naming them', async (t) => {
    const app = await build(t)
    await postPlant(app, { id: 1, name: 'a' })
    const { next } = await readEvents(app, '/events?limit=1')
    const cursor = new URL(next, 'http://host').searchParams.get('after') as string
    const forged = cursor.slice(0, -2) + (cursor.endsWith('AA') ? 'AB' : 'AA')
    const plants = (await app.inject({ url: '/plants?limit=1', headers: AUTH }))
    await postPlant(app, { id: 2, name: 'b' })
    const plantCursor = /cursor=([^>&]+)/.exec(String((await app.inject({ url: '/plants?limit=1', headers: AUTH })).headers.link))?.[1] as string
    t.equal(plants.statusCode, 200)
    const cases: Array<[string, RegExp]> = [
      [`/events?after=${forged}`, /querystring\/after/],
      [`/events?after=${plantCursor}`, /querystring\/after/],
      ['/events?after=nothing', /querystring\/after/],
      ['/events?after=', /querystring\/after/],
      ['/events?limit=0', /querystring\/limit/],
      ['/events?limit=1001', /querystring\/limit/],
      ['/events?limit=1.5', /querystring\/limit/],
      ['/events?limit=010', /querystring\/limit/],
      ['/events?wait=31', /querystring\/wait/],
      ['/events?wait=-1', /querystring\/wait/],
      ['/events?types=plant.added', /querystring\/types/],
      ['/events?types=', /querystring\/types/],
      ['/events?types=plant.created,', /querystring\/types/],
      ['/events?limit=1&limit=2', /querystring\/limit is repeated/],
      ['/events?since=1', /since/]
    ]
    for (const [url, message] of cases) assertError(t, await app.inject({ url, headers: AUTH }), 400, message)
    t.equal((await app.inject({ url: '/events?limit=1000&wait=0&types=plant.created', headers: AUTH })).statusCode, 200, 'the bounds themselves are good')
  })

  t.test('the scope events:read', async (t) => {
    const app = await build(t, { API_TOKENS_FILE: scopedTokensFile(t) })
    t.equal((await app.inject({ url: '/events', headers: bearer('events:read') })).statusCode, 200)
    const refused = await app.inject({ url: '/events', headers: bearer('plants:read') })
    assertError(t, refused, 403, /events:read/)
    t.equal(refused.headers['www-authenticate'], INSUFFICIENT('events:read'))
    t.equal((await app.inject({ url: '/events' })).statusCode, 401)
  })

  t.test('a cursor older than the oldest event kept is a 410', async (t) => {
    const app = await build(t, { EVENTS_RETENTION: '50ms' })
    const start = await readEvents(app, '/events')
    await postPlant(app, { id: 1, name: 'a' })
    await postPlant(app, { id: 2, name: 'b' })
    // The prune runs every retention while it is shorter than a minute.
    let res = await app.inject({ url: start.next, headers: AUTH })
    for (const deadline = Date.now() + 10_000; res.statusCode === 200 && Date.now() < deadline; await sleep(50)) {
      res = await app.inject({ url: start.next, headers: AUTH })
    }
    assertError(t, res, 410, /after=now/)
    const fresh = await readEvents(app, '/events')
    t.equal(fresh.res.statusCode, 200, 'without a cursor, the feed starts at what it keeps')
    await postPlant(app, { id: 3, name: 'c' })
    t.same((await readEvents(app, fresh.next)).events.map(change), ['plant.created {"id":"3","name":"c"}'], 'and goes on from there')
  })

  t.test('a long poll is answered by a commit on another instance', async (t) => {
    const url = await databaseUrl(t)
    // Two apps on one database: the same PostgreSQL, or the same SQLite file (another connection, as another process has).
    const reader = await buildOn(t, { DATABASE_URL: url })
    const writer = await buildOn(t, { DATABASE_URL: url })
    const { res, next } = await readEvents(reader, '/events?after=now')
    t.equal(res.statusCode, 200, res.body)
    const started = Date.now()
    const waiting = readEvents(reader, `${next}&wait=20`)
    await sleep(300)
    t.equal((await postPlant(writer, { id: 7, name: 'far' })).statusCode, 200)
    const committed = Date.now()
    const page = await waiting
    t.equal(page.res.statusCode, 200, page.res.body)
    t.same(page.events.map(change), ['plant.created {"id":"7","name":"far"}'])
    t.ok(Date.now() - committed < 5000 && Date.now() - started < 15_000, `answered ${Date.now() - committed} ms after the commit`)
    t.match(page.next, /&wait=20$/, 'the next link keeps wait')
  })

  t.test('a commit wakes many waiters with one store read per query', async (t) => {
    const config = loadConfig({ API_TOKENS: TOKEN, LOG_LEVEL: 'silent', DATABASE_URL: await databaseUrl(t), MAX_EVENT_LOOP_DELAY: '0', MAX_CONNECTIONS: '1000', MAX_CONNECTIONS_PER_ADDRESS: '1000' })
    // The real store, its feed's reads counted.
    const store = await openStore(config)
    const feed = store.events as EventFeed
    const read = feed.read.bind(feed)
    const count = { reads: 0 }
    feed.read = async (query) => { count.reads++; return await read(query) }
    const app = await buildApp(config, { store })
    t.teardown(() => app.close())
    await app.ready()
    await postPlant(app, { id: 1, name: 'before' })
    const { next } = await readEvents(app, '/events?after=now')
    const queries = [`${next}&wait=20`, `${next.replace('limit=100', 'limit=5')}&types=plant.created,plant.updated&wait=20`]
    const waiting = Array.from({ length: 200 }, (_, i) => readEvents(app, queries[i % 2]))
    for (const deadline = Date.now() + 10_000; count.reads < 200 && Date.now() < deadline;) await sleep(20)
    t.equal(count.reads, 200, 'each waiter read once, and found nothing')
    await sleep(100)
    count.reads = 0
    t.equal((await postPlant(app, { id: 2, name: 'woken' })).statusCode, 200)
    const pages = await Promise.all(waiting)
    t.ok(count.reads >= 2 && count.reads <= 3, `the wake read ${count.reads} times, not once per waiter`)
    t.ok(pages.every((page) => page.res.statusCode === 200), 'every waiter answered')
    t.ok(pages.every((page) => page.events.map(change).join() === 'plant.created {"id":"2","name":"woken"}'), 'with the event, once')
    t.same(new Set(pages.map((page) => page.next.replace(/&.*/, ''))).size, 1, 'and one next position')
    t.ok(pages.every((page, i) => page.next.endsWith(i % 2 === 0 ? '&limit=100&wait=20' : '&limit=5&types=plant.created,plant.updated&wait=20')), 'each keeping its query')
  })

  t.test('a follower at the head of a stream of commits gets a batch every WAKE_MS, and after a quiet spell an event at once', async (t) => {
    const app = await build(t)
    let { next } = await readEvents(app, '/events?after=now&wait=1')
    let writing = true
    let created = 0
    const started = performance.now()
    // Eight writers: commits keep coming.
    const writes = Promise.all(Array.from({ length: 8 }, async () => {
      while (performance.now() - started < 600) await postPlant(app, { id: ++created, name: 'streamed' })
    })).then(() => { writing = false })
    const seen: string[] = []
    let requests = 0
    // Until the writers are done and every create has been seen.
    for (;;) {
      if (!writing && seen.length >= created) break
      const page = await readEvents(app, next)
      requests++
      seen.push(...page.events.map((event) => event.data.id))
      next = page.next
      // A follower across a network: a few ms between an answer and its next request, while commits come.
      await sleep(5)
    }
    await writes
    const elapsed = performance.now() - started
    t.same(seen.map(Number).sort((a, b) => a - b), Array.from({ length: created }, (_, i) => i + 1), `each of the ${created} creates once`)
    t.ok(created > 2 * requests, `${created} creates in ${elapsed.toFixed(0)} ms reached the follower in ${requests} answers`)
    // A part page waits for WAKE_MS after the last answer, an empty one for the room's next wake-up: about one answer per WAKE_MS.
    t.ok(requests <= 1.5 * elapsed / WAKE_MS + 3, `about one answer every ${WAKE_MS} ms`)

    // Three tries: a machine busy with other work may be slow to answer, never held back by the pacing.
    const lone: number[] = []
    for (let i = 0; i < 3 && !lone.some((ms) => ms < WAKE_MS); i++) {
      await sleep(2 * WAKE_MS)
      await postPlant(app, { id: 1_000_000 + i, name: 'lone' })
      const asked = performance.now()
      const page = await readEvents(app, next)
      lone.push(performance.now() - asked)
      t.equal(page.events.length, 1, 'the lone event')
      next = page.next
    }
    t.ok(lone.some((ms) => ms < WAKE_MS), `after a quiet spell, at once (${lone.map((ms) => ms.toFixed(1)).join(', ')} ms)`)
  })

  t.test('wait ends with an empty page when nothing commits, and a filtered-out commit does not end it', async (t) => {
    const app = await build(t)
    const { next } = await readEvents(app, '/events?after=now&types=plant.deleted')
    const started = Date.now()
    const waiting = readEvents(app, `${next}&wait=1`)
    await sleep(100)
    await postPlant(app, { id: 1, name: 'a' })
    const page = await waiting
    t.same(page.events, [])
    t.ok(Date.now() - started >= 950, 'waited the whole second')
  })

  t.test('a shutdown answers waiting requests at once', async (t) => {
    const app = await build(t)
    const waiting = app.inject({ url: '/events?after=now&wait=30', headers: AUTH })
    await sleep(200)
    const started = Date.now()
    await app.close()
    const res = await waiting
    t.same([res.statusCode, res.body], [200, '[]'])
    t.ok(Date.now() - started < 5000, 'well before the 30 s')
  })
})

t.test('waiting requests are bounded like connections: one past MAX_CONNECTIONS is answered at once', async (t) => {
  const app = await buildOn(t, { MAX_CONNECTIONS: '2', MAX_CONNECTIONS_PER_ADDRESS: '2' })
  const waiting = [1, 2].map(() => app.inject({ url: '/events?after=now&wait=30', headers: AUTH }))
  await sleep(200)
  const started = Date.now()
  const third = await app.inject({ url: '/events?after=now&wait=30', headers: AUTH })
  t.same([third.statusCode, third.body], [200, '[]'])
  t.ok(Date.now() - started < 5000, 'answered without waiting')
  await postPlant(app, { id: 1, name: 'a' })
  for (const res of await Promise.all(waiting)) t.equal(JSON.parse(res.body).length, 1, 'the two waiting hear the commit')
})

t.test('EVENTS_RETENTION=0: no feed, and a change no endpoint receives writes no event', async (t) => {
  const url = sqliteUrl(t)
  const app = await buildOn(t, { DATABASE_URL: url, EVENTS_RETENTION: '0' })
  assertError(t, await app.inject({ url: '/events', headers: AUTH }), 404)
  t.equal((await postPlant(app, { id: 1, name: 'a' })).statusCode, 200)
  t.equal((await patchPlant(app, 1, { name: 'b' })).statusCode, 200)
  const db = new Database(url.slice('sqlite:'.length), { readonly: true })
  t.teardown(() => db.close())
  t.equal(db.prepare('SELECT count(*) FROM webhook_events').pluck().get(), 0)
  const on = await buildOn(t, { DATABASE_URL: url })
  await postPlant(on, { id: 2, name: 'c' })
  t.same((await readEvents(on, '/events')).events.map(change), ['plant.created {"id":"2","name":"c"}'], 'turned on, the feed starts at the end')
})
