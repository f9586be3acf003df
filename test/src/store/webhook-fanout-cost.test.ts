import t from 'tap'
import type { PlantStore } from '../../../src/store/types.js'
import { forEachStore, openTestStore, rawSql } from '../../helpers/stores.js'

// A create's cost does not grow with the endpoints: it writes one event, which the sender
// expands later. Two stores in one run, creates taking turns between them, so that the load
// of the machine weighs on both alike: one without endpoints, one with ENDPOINTS (as many as
// a service is meant to hold), every one enabled and receiving plant.created.
const ENDPOINTS = 4000
const CREATES = 150
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

async function timed (store: PlantStore, id: bigint): Promise<number> {
  const start = process.hrtime.bigint()
  await store.create({ id, name: `plant ${id}` })
  return Number(process.hrtime.bigint() - start) / 1e6
}

forEachStore(t, (t, _build, databaseUrl) => {
  t.test(`with ${ENDPOINTS} endpoints a create's median latency stays within 3x of none`, async (t) => {
    const bare = await databaseUrl(t)
    // A SQLite test has one file: the other store gets one beside it.
    const busy = bare.startsWith('sqlite:') ? bare.replace(/\.db$/, '-busy.db') : await databaseUrl(t)
    const none = await openTestStore(t, bare)
    const many = await openTestStore(t, busy)
    for (let i = 0; i < ENDPOINTS; i += 10) {
      await Promise.all(Array.from({ length: 10 }, (_, j) =>
        many.webhooks.createEndpoint({ url: `https://r${i + j}.example/hook`, secret: SECRET, events: (i + j) % 2 === 0 ? undefined : ['plant.created', 'plant.deleted'] })))
    }
    // Warm both (statements prepared, pages cached), then measure in turns.
    for (let id = 1n; id <= 20n; id++) await Promise.all([none.create({ id: -id, name: 'warm' }), many.create({ id: -id, name: 'warm' })])
    const times: { none: number[], many: number[] } = { none: [], many: [] }
    for (let id = 1n; id <= BigInt(CREATES); id++) {
      times.none.push(await timed(none, id))
      times.many.push(await timed(many, id))
    }
    const [base, loaded] = [median(times.none), median(times.many)]
    t.comment(`median create: ${base.toFixed(2)} ms without endpoints, ${loaded.toFixed(2)} ms with ${ENDPOINTS} (${(loaded / base).toFixed(2)}x)`)
    t.ok(loaded < 3 * base, `within 3x: ${(loaded / base).toFixed(2)}x`)

    const sql = await rawSql(t, busy)
    t.equal(Number((await sql('SELECT count(*) AS n FROM webhook_events'))[0].n), CREATES + 20, 'one event per create')
    t.equal(Number((await sql('SELECT count(*) AS n FROM webhook_deliveries'))[0].n), 0, 'no delivery written by a create')
    const start = Date.now()
    t.same(await many.webhooks.expand(ENDPOINTS), { deliveries: ENDPOINTS, more: true }, 'the sender expands an event to every endpoint, a bounded step at a time')
    t.comment(`one step of ${ENDPOINTS} deliveries in ${Date.now() - start} ms`)
  })
})
