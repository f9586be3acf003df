import type { Test } from 'tap'
import { createClient, PlantStoreError, type PlantListItem } from '../../src/client/index.js'
import { pauseStore, recordingFetch, startService, TOKEN, type StoreName } from './service.js'
import { startProxy } from './proxy.js'

const MIN = -(2n ** 63n)
const MAX = 2n ** 63n - 1n
const ABOVE_DOUBLE = 2n ** 53n + 1n

/** The client against the real service on one store: test/src/client/ runs it on each. */
export function clientSuite (t: Test, store: StoreName): void {
  t.test('every plant operation against the real service, ids exact', async (t) => {
    // A store that waits longer than this for a lock answers 503.
    const service = await startService(t, store, { DATABASE_TIMEOUT: '1000' })
    const { fetch, exchanges } = recordingFetch()
    const client = createClient({ baseUrl: service.url, token: TOKEN, fetch })

    t.test('create and get at both int64 ends and past 2^53, in every id form', async (t) => {
      t.strictSame(await client.create({ id: MIN, name: 'Min', tag: 'edge' }), { name: 'Min', tag: 'edge' })
      t.strictSame(await client.create({ id: MAX.toString(), name: 'Max' }), { name: 'Max' }, 'a canonical decimal string')
      t.strictSame(await client.create({ id: ABOVE_DOUBLE, name: 'Odd' }), { name: 'Odd' })
      t.strictSame(await client.create({ id: ABOVE_DOUBLE - 1n, name: 'Even' }), { name: 'Even' }, '2^53 is another plant')
      t.strictSame(await client.create({ id: -42, name: 'Negative', tag: 'small' }), { name: 'Negative', tag: 'small' }, 'a safe number')
      t.strictSame(await client.get(MIN), { name: 'Min', tag: 'edge' })
      t.strictSame(await client.get(MAX), { name: 'Max' })
      t.strictSame(await client.get('9007199254740993'), { name: 'Odd' })
      t.strictSame(await client.get(ABOVE_DOUBLE - 1n), { name: 'Even' })
      t.strictSame(await client.get(-42), { name: 'Negative', tag: 'small' }, 'a safe number')
      t.equal(exchanges.at(-3)?.url, `${service.url}/plants/9007199254740993`, 'the path carries the exact id')

      const body = await (await globalThis.fetch(`${service.url}/plants?limit=100`, { headers: { authorization: `Bearer ${TOKEN}` } })).text()
      t.match(body, '"id":9007199254740993,"name":"Odd"', 'the service stored the exact id the client wrote')
      t.match(body, '"id":-9223372036854775808,"name":"Min"')
    })

    t.test('a replay answers the same; a different plant under the id is a 409, never retried', async (t) => {
      t.strictSame(await client.create({ id: ABOVE_DOUBLE, name: 'Odd' }), { name: 'Odd' })
      const before = exchanges.length
      const error = await client.create({ id: ABOVE_DOUBLE, name: 'Other' }).catch((error: unknown) => error)
      t.ok(error instanceof PlantStoreError)
      if (!(error instanceof PlantStoreError) || error.kind !== 'conflict') throw new Error('a conflict was expected')
      t.equal(error.status, 409)
      t.equal(error.message, 'A different plant already has id 9007199254740993; it was left as it was.')
      t.same([error.method, error.url], ['POST', `${service.url}/plants`])
      t.equal(exchanges.length - before, 1, 'one request: a 409 is not retried')
      t.strictSame(await client.get(ABOVE_DOUBLE), { name: 'Odd' })
    })

    t.test('delete: gone, then a 404; the id is free again', async (t) => {
      await client.delete(ABOVE_DOUBLE)
      const missing = await client.get(ABOVE_DOUBLE).catch((error: unknown) => error) as PlantStoreError
      t.match(missing, { kind: 'not-found', status: 404, message: 'No plant has id 9007199254740993.', retryAfter: undefined })
      const before = exchanges.length
      const again = await client.delete(ABOVE_DOUBLE).catch((error: unknown) => error) as PlantStoreError
      t.match(again, { kind: 'not-found', status: 404, method: 'DELETE' }, 'a 404 on the first attempt is a 404')
      t.equal(exchanges.length - before, 1)
      t.strictSame(await client.create({ id: ABOVE_DOUBLE, name: 'New' }), { name: 'New' })
    })

    t.test('update: a merge patch, the ETag of every plant read, a 412 as a typed error never retried', async (t) => {
      const id = ABOVE_DOUBLE + 2n
      const created = await client.create({ id, name: 'Fren', tag: 'greenhouse' })
      t.match(created.etag, /^"[\w-]+"$/, 'create gives the ETag')
      t.strictSame({ ...created }, { name: 'Fren', tag: 'greenhouse' }, 'which a spread leaves out')
      t.equal(JSON.stringify(created), '{"name":"Fren","tag":"greenhouse"}', 'as JSON does')
      const read = await client.get(id)
      t.equal(read.etag, created.etag, 'get gives the same for the same plant')

      const renamed = await client.update(id, { name: 'Fern' }, { ifMatch: read.etag })
      t.strictSame(renamed, { name: 'Fern', tag: 'greenhouse' }, 'the plant as it now is')
      t.not(renamed.etag, read.etag, 'with its new ETag')
      t.equal(exchanges.at(-1)?.url, `${service.url}/plants/9007199254740995`, 'the path carries the exact id')

      const before = exchanges.length
      const stale = await client.update(id, { name: 'Palm' }, { ifMatch: read.etag }).catch((error: unknown) => error)
      if (!(stale instanceof PlantStoreError) || stale.kind !== 'precondition-failed') throw new Error('a 412 was expected')
      t.equal(stale.status, 412)
      t.match(stale.message, /^Plant 9007199254740995 is not as the If-Match header expects/)
      t.same([stale.method, stale.url], ['PATCH', `${service.url}/plants/9007199254740995`])
      t.equal(exchanges.length - before, 1, 'one request: a 412 is not retried')

      t.strictSame(await client.update(id, { tag: null }, { ifMatch: ['"other"', renamed.etag as string] }), { name: 'Fern' }, 'a list of ETags')
      t.strictSame(await client.update(id, { tag: 'shade' }, { ifMatch: '*' }), { name: 'Fern', tag: 'shade' }, '*: if it exists')
      t.strictSame(await client.update(id, {}), { name: 'Fern', tag: 'shade' }, 'no precondition, nothing to change')
      await t.rejects(client.update(id + 100n, { name: 'x' }), { name: 'PlantStoreError', kind: 'not-found', status: 404 })
      await t.rejects(client.delete(id, { ifMatch: read.etag }), { name: 'PlantStoreError', kind: 'precondition-failed' }, 'a delete against a stale ETag')
      await client.delete(id, { ifMatch: (await client.get(id)).etag })
      await t.rejects(client.get(id), { name: 'PlantStoreError', kind: 'not-found' })
    })

    t.test('ifMatch on get, ifNoneMatch on update and delete: a 412 as a typed error, and nothing done', async (t) => {
      const id = ABOVE_DOUBLE + 3n
      const created = await client.create({ id, name: 'Ivy' })
      const etag = created.etag as string
      t.strictSame(await client.get(id, { ifMatch: etag }), { name: 'Ivy' }, 'get: the ETag it has')
      t.strictSame(await client.get(id, { ifMatch: ['"other"', etag] }), { name: 'Ivy' })
      const failed = { name: 'PlantStoreError', kind: 'precondition-failed', status: 412 }
      await t.rejects(client.get(id, { ifMatch: '"other"' }), { ...failed, method: 'GET' })
      await t.rejects(client.get(id + 100n, { ifMatch: '*' }), failed, 'no plant: no ETag is current')
      await t.rejects(client.update(id, { name: 'Palm' }, { ifNoneMatch: etag }), { ...failed, message: /If-None-Match/ })
      await t.rejects(client.update(id, { name: 'Palm' }, { ifNoneMatch: '*' }), failed, '*: a plant exists')
      await t.rejects(client.delete(id, { ifNoneMatch: ['"other"', etag] }), { ...failed, method: 'DELETE' })
      await t.rejects(client.delete(id, { ifMatch: etag, ifNoneMatch: '*' }), failed)
      t.strictSame(await client.get(id), { name: 'Ivy' }, 'nothing changed')
      t.strictSame(await client.update(id, { tag: 'climber' }, { ifMatch: etag, ifNoneMatch: '"other"' }), { name: 'Ivy', tag: 'climber' })
      await client.delete(id, { ifNoneMatch: etag })
      await t.rejects(client.delete(id, { ifNoneMatch: '*' }), { name: 'PlantStoreError', kind: 'not-found' })
    })

    t.test('each error class', async (t) => {
      const bad = await client.listPage({ limit: 500 }).catch((error: unknown) => error) as PlantStoreError
      t.match(bad, { kind: 'bad-request', status: 400, message: /^querystring\/limit/ })
      const nul = await client.create({ id: 5, name: 'a\u0000b' }).catch((error: unknown) => error) as PlantStoreError
      t.match(nul, { kind: 'bad-request', status: 400, message: /^body\/name/ })

      const before = exchanges.length
      const stranger = createClient({ baseUrl: service.url, token: 'not-the-token', fetch })
      const refused = await stranger.get(1).catch((error: unknown) => error) as PlantStoreError
      t.match(refused, { kind: 'unauthorized', status: 401, message: /bearer token is not valid/ })
      t.equal(exchanges.length - before, 1, 'a 401 is not retried')
      t.notMatch(refused.message + refused.url, 'not-the-token', 'the token is in no error')

      const large = createClient({ baseUrl: service.url, token: TOKEN })
      const tooLarge = await large.create({ id: 6, name: 'x'.repeat(1_100_000) }).catch((error: unknown) => error) as PlantStoreError
      t.match(tooLarge, { kind: 'other', status: 413, retryAfter: undefined, message: /larger than the limit/ })
    })

    t.test('ids that could be wrong are refused before anything is sent', async (t) => {
      const before = exchanges.length
      const cases: Array<[unknown, RegExp, ErrorConstructor]> = [
        [2 ** 53 + 2, /not a safe integer .* it may already be rounded/, RangeError],
        [1.5, /not a safe integer/, RangeError],
        [Number.NaN, /not a safe integer/, RangeError],
        [2n ** 63n, /outside the signed 64-bit range/, RangeError],
        ['-9223372036854775809', /outside the signed 64-bit range/, RangeError],
        ['007', /not a bigint, a safe integer or a canonical decimal string/, TypeError],
        ['+7', /canonical/, TypeError],
        ['-0', /canonical/, TypeError],
        [' 7', /canonical/, TypeError],
        [undefined, /canonical/, TypeError]
      ]
      for (const [id, message, type] of cases) {
        await t.rejects(client.get(id as bigint), type, `get(${String(id)})`)
        await t.rejects(client.delete(id as bigint), { message })
        await t.rejects(client.update(id as bigint, { name: 'x' }), { message })
        await t.rejects(client.create({ id: id as bigint, name: 'x' }), { message })
      }
      t.equal(exchanges.length, before, 'no request was made')
    })

    t.test('list walks 1,050 plants page by page in id order; listPage gives cursors', async (t) => {
      for (const id of [MIN, MAX, ABOVE_DOUBLE - 1n, -42n]) await client.delete(id)
      await client.delete(ABOVE_DOUBLE)
      const ids = Array.from({ length: 1050 }, (_, i) => BigInt(i * 7919) - 4_000_000n + (i % 3 === 0 ? 2n ** 62n : 0n))
      for (let i = 0; i < ids.length; i += 50) {
        await Promise.all(ids.slice(i, i + 50).map((id, j) => client.create({ id, name: `p${i + j}`, tag: (i + j) % 10 === 0 ? 'tenth' : undefined })))
      }
      const sorted = [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))

      const before = exchanges.length
      const seen: PlantListItem[] = []
      for await (const plant of client.list({ limit: 100 })) seen.push(plant)
      t.equal(seen.length, 1050)
      t.ok(seen.every((plant) => typeof plant.id === 'bigint'), 'ids are bigint')
      t.strictSame(seen.map((plant) => plant.id), sorted, 'every plant once, in signed id order, exact')
      t.equal(exchanges.length - before, 11, 'eleven pages of 100: no empty page at the end')
      const tenth = seen.find((plant) => plant.id === ids[10])
      t.strictSame(tenth, { id: ids[10], name: 'p10', tag: 'tenth' })

      const tagged: bigint[] = []
      for await (const plant of client.list({ tag: 'tenth' })) tagged.push(plant.id)
      t.strictSame(tagged, sorted.filter((id) => ids.indexOf(id) % 10 === 0), 'a tag filter survives the next links')

      const first = await client.listPage({ limit: 2 })
      t.strictSame(first.items.map((plant) => plant.id), sorted.slice(0, 2))
      t.type(first.nextCursor, 'string')
      const second = await client.listPage({ limit: 2, cursor: first.nextCursor })
      t.strictSame(second.items.map((plant) => plant.id), sorted.slice(2, 4))
      const sizes: number[] = []
      for (let cursor: string | undefined, more = true; more; more = cursor !== undefined) {
        const page = await client.listPage({ limit: 100, cursor })
        sizes.push(page.items.length)
        cursor = page.nextCursor
      }
      t.strictSame(sizes, [...Array(10).fill(100), 50], 'pages by cursor until one comes without')
      const end = await client.listPage({ tag: 'no such tag' })
      t.strictSame(end, { items: [] }, 'an empty listing: no cursor')
      const altered = await client.listPage({ cursor: 'AAAAAAAAAAAAAAAAAAAAAAA' }).catch((error: unknown) => error)
      t.match(altered, { kind: 'bad-request', message: /querystring\/cursor/ })
    })

    t.test('create and delete retry through a real 503 while the store is paused, then succeed', async (t) => {
      const paused = createClient({ baseUrl: service.url, token: TOKEN, fetch, retries: { max: 20, baseDelay: 200, maxDelay: 800 } })
      const resume = await pauseStore(t, service)
      const started = performance.now()
      const resumed = new Promise((resolve) => setTimeout(resolve, 2500)).then(resume)
      const from = exchanges.length
      const [created] = await Promise.all([paused.create({ id: 77n, name: 'Patient' }), resumed])
      t.strictSame(created, { name: 'Patient' })
      const attempts = exchanges.slice(from)
      t.ok(attempts.length >= 2, `${attempts.length} attempts`)
      t.equal(attempts[0].status, 503, 'the first answer was a 503')
      t.ok(attempts.slice(0, -1).every((attempt) => attempt.status === 503), 'every answer but the last was a 503')
      t.equal(attempts.at(-1)?.status, 200)
      t.ok(performance.now() - started >= 2400, 'the create waited for the store')

      const changing = await pauseStore(t, service)
      const marked = exchanges.length
      const [changed] = await Promise.all([paused.update(77n, { tag: 'patient' }), new Promise((resolve) => setTimeout(resolve, 2500)).then(changing)])
      t.strictSame(changed, { name: 'Patient', tag: 'patient' })
      t.equal(exchanges[marked].status, 503, 'a change retries through the 503 too')
      t.equal(exchanges.at(-1)?.status, 200)

      const again = await pauseStore(t, service)
      const mark = exchanges.length
      await Promise.all([paused.delete(77n), new Promise((resolve) => setTimeout(resolve, 2500)).then(again)])
      t.equal(exchanges[mark].status, 503)
      t.equal(exchanges.at(-1)?.status, 204)
      await t.rejects(client.get(77n), { name: 'PlantStoreError', kind: 'not-found' })

      const impatient = createClient({ baseUrl: service.url, token: TOKEN, retries: 0 })
      const held = await pauseStore(t, service)
      const refused = await impatient.create({ id: 78n, name: 'Hasty' }).catch((error: unknown) => error) as PlantStoreError
      await held()
      t.match(refused, { kind: 'unavailable', status: 503, message: /unavailable/ }, 'without retries the 503 is the caller\'s')
    })

    t.test('answers lost on the way back: create, get and delete retry; a DELETE then 404 is reported deleted', async (t) => {
      const proxy = await startProxy(t, service.url)
      const { origin } = new URL(proxy.url)
      const lossy = createClient({ baseUrl: origin, token: TOKEN, fetch, retries: { max: 3, baseDelay: 20 } })

      proxy.drops = 1
      let from = exchanges.length
      t.strictSame(await lossy.create({ id: 88n, name: 'Sturdy' }), { name: 'Sturdy' }, 'the retry is answered as a replay')
      t.same(exchanges.slice(from).map((e) => e.status), [undefined, 200], 'the first answer was lost')

      proxy.drops = 1
      from = exchanges.length
      t.strictSame(await lossy.get(88n), { name: 'Sturdy' })
      t.same(exchanges.slice(from).map((e) => e.status), [undefined, 200])

      proxy.drops = 1
      from = exchanges.length
      await lossy.delete(88n)
      t.same(exchanges.slice(from).map((e) => [e.method, e.status]), [['DELETE', undefined], ['DELETE', 404]],
        'the first DELETE was done and its 204 lost; the retry found nothing, and the client reports it deleted')
      await t.rejects(client.get(88n), { name: 'PlantStoreError', kind: 'not-found' }, 'it is gone')

      proxy.drops = 4
      const lost = await lossy.get(88n).catch((error: unknown) => error) as PlantStoreError
      t.match(lost, { kind: 'network', status: undefined, method: 'GET', url: `${origin}/plants/88`, message: /^No answer to GET http:\/\/127\.0\.0\.1:\d+\/plants\/88: / })
      t.type(lost.cause, Error, 'what fetch threw is the cause')
      t.notMatch(lost.message, TOKEN)
    })
  })
}
