import t from 'tap'
import { AUTH, build, patchPlant, postPlant } from '../helpers/build.js'
import { change, readAll, readEvents, type SeenEvent } from '../helpers/events.js'
import { forEachStore } from '../helpers/stores.js'

// Two instances on one database take creates, patches and deletes at once (each id's changes in
// turn, alternating instances), while a follower reads the feed through both: it sees every
// acknowledged change exactly once, in an order that keeps each plant's, and what a fresh reader sees.
const WORKERS = 24
const IDS_PER_WORKER = 4
const ROUNDS = 4

forEachStore(t, (t, _build, databaseUrl) => {
  t.test('no skip and no repeat under concurrent writes on two instances', async (t) => {
    const url = await databaseUrl(t)
    const apps = [await build(t, { DATABASE_URL: url }), await build(t, { DATABASE_URL: url })]
    const { next: start } = await readEvents(apps[0], '/events?after=now')
    const made = new Map<string, string[]>()
    const state = { writing: true }
    const seen: SeenEvent[] = []
    const follower = (async () => {
      for (let i = 0, next = start; ; i++) {
        // Once every write is acknowledged, one read to the end shows whatever is left.
        const done = !state.writing
        const page = await readEvents(apps[i % 2], next.replace(/&wait=\d+/, '') + (done ? '' : '&wait=1'))
        if (page.res.statusCode !== 200) throw new Error(page.res.body)
        seen.push(...page.events)
        next = page.next
        if (done && page.events.length === 0) break
      }
    })()
    let op = 0
    await Promise.all(Array.from({ length: WORKERS }, async (_, w) => {
      for (let k = 0; k < IDS_PER_WORKER; k++) {
        const id = String(w * 1000 + k)
        const changes: string[] = []
        made.set(id, changes)
        for (let round = 0; round < ROUNDS; round++) {
          const app = () => apps[op++ % 2]
          t.equal((await postPlant(app(), { id: Number(id), name: `n${round}` })).statusCode, 200)
          changes.push(`plant.created {"id":"${id}","name":"n${round}"}`)
          t.equal((await patchPlant(app(), id, { name: `m${round}` })).statusCode, 200)
          changes.push(`plant.updated {"id":"${id}","name":"m${round}"}`)
          if (round < ROUNDS - 1) {
            t.equal((await app().inject({ method: 'DELETE', url: `/plants/${id}`, headers: AUTH })).statusCode, 204)
            changes.push(`plant.deleted {"id":"${id}"}`)
          }
        }
      }
    }))
    state.writing = false
    await follower
    const fresh = await readAll(apps[1], start.replace('limit=100', 'limit=1000'))
    t.same(seen.map((event) => event.id), fresh.events.map((event) => event.id), 'the follower saw what a fresh reader sees, in the same order')
    t.equal(new Set(seen.map((event) => event.id)).size, seen.length, 'no repeat')
    const total = [...made.values()].reduce((n, changes) => n + changes.length, 0)
    t.equal(seen.length, total, 'every acknowledged change, none more')
    const byPlant = new Map<string, string[]>()
    for (const event of seen) byPlant.set(event.data.id, [...byPlant.get(event.data.id) ?? [], change(event)])
    t.same(Object.fromEntries(byPlant), Object.fromEntries(made), 'each plant\'s changes in the order they were made')
  })
})
