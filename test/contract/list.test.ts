import { hash } from 'node:crypto'
import t from 'tap'
import { AUTH, assertError, build, build as buildOn, postPlant } from '../helpers/build.js'
import { list, walk } from '../helpers/list.js'
import { forEachStore } from '../helpers/stores.js'

const EDGES = ['-9223372036854775808', '-9223372036854775807', '-9007199254740993', '-1', '0', '1',
  '9007199254740992', '9007199254740993', '9223372036854775806', '9223372036854775807']

async function createAll (app: Awaited<ReturnType<typeof build>>, ids: Array<string | number>, tag?: (id: number) => string | undefined): Promise<void> {
  for (let i = 0; i < ids.length; i += 250) {
    await Promise.all(ids.slice(i, i + 250).map(async (id) => {
      const plantTag = tag?.(Number(id))
      const res = await postPlant(app, `{"id":${id},"name":"plant ${id}"${plantTag === undefined ? '' : `,"tag":"${plantTag}"`}}`)
      if (res.statusCode !== 200) throw new Error(`create ${id}: ${res.statusCode} ${res.body}`)
    }))
  }
}

/** A cursor as anyone could make one before cursors were keyed: a check of SHA-256 over the position and the listing, no secret. */
function unkeyedCursor (position: Buffer, listing: string): string {
  const check = hash('sha256', Buffer.concat([Buffer.from('plant-store cursor'), position, Buffer.from(listing)]), 'buffer').subarray(0, 8)
  return Buffer.concat([position, check]).toString('base64url')
}

forEachStore(t, (t, build, databaseUrl) => {
  t.test('an empty store lists [] with no next link', async (t) => {
    const app = await build(t)
    const { res } = await list(app, '/plants')
    t.equal(res.statusCode, 200)
    t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
    t.equal(res.body, '[]')
    t.equal(res.headers.link, undefined)
  })

  t.test('ids are in signed order and exact at both int64 ends and around 2^53', async (t) => {
    const app = await build(t)
    await createAll(app, [...EDGES].reverse())
    const { res } = await list(app, '/plants?limit=100')
    t.equal(res.body, `[${EDGES.map((id) => `{"id":${id},"name":"plant ${id}"}`).join(',')}]`, 'exact ids, no tag key, no other key')
  })

  t.test('a page of exactly the remaining plants has no next link; one more plant adds one', async (t) => {
    const app = await build(t)
    await createAll(app, [1, 2, 3, 4])
    t.equal((await list(app, '/plants?limit=4')).next, undefined, 'exactly limit plants: no next')
    t.same((await list(app, '/plants')).items.length, 4, 'the default limit holds them all')
    await createAll(app, [5])
    const first = await list(app, '/plants?limit=4')
    t.same(first.items.map((p) => p.id), ['1', '2', '3', '4'])
    t.match(first.res.headers.link, /^<\/plants\?limit=4&cursor=[A-Za-z0-9_-]+>; rel="next"$/, 'a relative reference that keeps limit')
    const last = await list(app, first.next as string)
    t.same(last.items.map((p) => p.id), ['5'])
    t.equal(last.next, undefined, 'the last page has no next link: no empty page at the end')
  })

  t.test('the default page is 20 plants', async (t) => {
    const app = await build(t)
    await createAll(app, Array.from({ length: 21 }, (_, i) => i + 1))
    const page = await list(app, '/plants')
    t.equal(page.items.length, 20)
    t.match(page.next, /limit=20/)
  })

  t.test('a walk sees each plant that exists throughout exactly once while others are created and deleted', async (t) => {
    const app = await build(t)
    const stable = Array.from({ length: 2537 }, (_, i) => i * 4)
    await createAll(app, stable)
    let round = 0
    const pages = await walk(app, '/plants?limit=100', async () => {
      // Between pages another client adds plants in the gaps and removes some of its own.
      round++
      await createAll(app, [round * 400 + 1, round * 400 + 2, -round, 20000 + round])
      const gone = await app.inject({ method: 'DELETE', url: `/plants/${round * 400 + 1}`, headers: AUTH })
      t.equal(gone.statusCode, 204)
    })
    const seen = pages.flat().map((p) => Number(p.id))
    t.ok(pages.slice(0, -1).every((page) => page.length === 100), 'every page but the last is full')
    t.same(seen, [...seen].sort((a, b) => a - b), 'ascending')
    t.equal(new Set(seen).size, seen.length, 'no plant twice')
    const seenSet = new Set(seen)
    t.same(stable.filter((id) => !seenSet.has(id)), [], 'no stable plant missed')
  })

  t.test('a tag filter walk keeps limit and tag in every next link', async (t) => {
    const app = await build(t)
    await createAll(app, Array.from({ length: 60 }, (_, i) => i - 30), (id) => id % 3 === 0 ? 'a b/&é' : id % 3 === 1 ? 'other' : undefined)
    const pages = await walk(app, `/plants?limit=7&tag=${encodeURIComponent('a b/&é')}`)
    const ids = pages.flat().map((p) => Number(p.id))
    t.same(ids, Array.from({ length: 60 }, (_, i) => i - 30).filter((id) => id % 3 === 0))
    t.ok(pages.flat().every((p) => p.tag === 'a b/&é'))
    const first = await list(app, `/plants?limit=7&tag=${encodeURIComponent('a b/&é')}`)
    t.match(first.res.headers.link, /^<\/plants\?limit=7&tag=a%20b%2F%26%C3%A9&cursor=[A-Za-z0-9_-]+>; rel="next"$/)
    t.equal((await list(app, '/plants?tag=none')).res.body, '[]')
  })

  t.test('every bad query is a 400 that names the parameter', async (t) => {
    const app = await build(t)
    const cases: Array<[string, RegExp]> = [
      ['limit=0', /^querystring\/limit must be an integer from 1 to 100/],
      ['limit=101', /^querystring\/limit must be/],
      ['limit=1.5', /^querystring\/limit must be/],
      ['limit=010', /^querystring\/limit must be/],
      ['limit=+5', /^querystring\/limit must be/],
      ['limit=1e1', /^querystring\/limit must be/],
      ['limit=', /^querystring\/limit must be/],
      ['limit=-1', /^querystring\/limit must be/],
      ['limit=5&limit=5', /^querystring\/limit is repeated/],
      ['tag=a&tag=b', /^querystring\/tag is repeated/],
      ['cursor=x&cursor=y', /^querystring\/cursor is repeated/],
      ['offset=20', /^querystring\/offset is not a parameter of this operation$/],
      ['tag=%00', /^querystring\/tag must not contain U\+0000/],
      ['cursor=', /^querystring\/cursor is not one this service gave/],
      ['cursor=abc', /^querystring\/cursor is not one this service gave/],
      ['cursor=AAAAAAAAAAAAAAAAAAAAAAA', /^querystring\/cursor is not one this service gave/],
      ['cursor=AQAAAAAAAAAAAAAAAAAAAA%3D', /^querystring\/cursor/]
    ]
    for (const [query, message] of cases) assertError(t, (await list(app, `/plants?${query}`)).res, 400, message)
  })

  t.test('an altered cursor, or one of another tag, is a 400', async (t) => {
    const app = await build(t)
    await createAll(app, [1, 2, 3], () => 'a')
    const next = (await list(app, '/plants?limit=1&tag=a')).next as string
    t.equal((await list(app, next)).res.statusCode, 200)
    const cursor = new URLSearchParams(next.split('?')[1]).get('cursor') as string
    for (let i = 0; i < cursor.length; i++) {
      const flipped = cursor.slice(0, i) + (cursor[i] === 'A' ? 'B' : 'A') + cursor.slice(i + 1)
      assertError(t, (await list(app, `/plants?limit=1&tag=a&cursor=${flipped}`)).res, 400, /cursor/)
    }
    assertError(t, (await list(app, `/plants?limit=1&tag=b&cursor=${cursor}`)).res, 400, /cursor/)
    assertError(t, (await list(app, `/plants?limit=1&cursor=${cursor}`)).res, 400, /cursor/)
  })

  t.test('cursors are authenticated with a key of the database: a forged one is a 400, the peers on the database accept each other\'s', async (t) => {
    // Two instances on one database (on SQLite, one file), the second started after the first has made the key.
    const url = await databaseUrl(t)
    const one = await buildOn(t, { DATABASE_URL: url })
    await createAll(one, [1, 2, 3, 4, 5], (id) => id % 2 === 0 ? 'even' : undefined)
    const two = await buildOn(t, { DATABASE_URL: url })
    const next = (await list(one, '/plants?limit=2')).next as string
    t.same((await list(two, next)).items.map((plant) => plant.id), ['3', '4'], 'the other instance takes the cursor')
    const tagged = (await list(two, '/plants?limit=1&tag=even')).next as string
    t.same((await list(one, tagged)).items.map((plant) => plant.id), ['4'], 'and the other way round, with a tag')

    await t.test('another database has another key', async (t) => {
      const other = await build(t)
      await createAll(other, [1, 2, 3, 4, 5])
      assertError(t, (await list(other, next)).res, 400, /^querystring\/cursor is not one this service gave/)
    })

    // Positions made up by hand, sealed the way a client could copy: the largest id, and the start of the list.
    for (const id of [9223372036854775807n, -9223372036854775808n, 2n]) {
      const position = Buffer.alloc(9)
      position[0] = 1
      position.writeBigInt64BE(id, 1)
      for (const cursor of [unkeyedCursor(position, '-'), Buffer.concat([position, Buffer.alloc(16)]).toString('base64url')]) {
        assertError(t, (await list(one, `/plants?limit=2&cursor=${cursor}`)).res, 400, /^querystring\/cursor is not one this service gave/)
      }
    }
  })

  t.test('listing needs the bearer token', async (t) => {
    const app = await build(t)
    assertError(t, await app.inject({ url: '/plants' }), 401)
    assertError(t, await app.inject({ url: '/plants?limit=oops' }), 401, /Authentication required/)
  })
})
