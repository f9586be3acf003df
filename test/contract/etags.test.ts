import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { assertError, AUTH, getPlant, patchPlant, postPlant } from '../helpers/build.js'
import { forEachStore } from '../helpers/stores.js'

// A strong ETag (RFC 9110 §8.8.3): a quoted opaque tag, no W/.
const STRONG = /^"[\x21\x23-\x7E]+"$/

function del (app: FastifyInstance, id: number, headers: Record<string, string> = {}) {
  return app.inject({ method: 'DELETE', url: `/plants/${id}`, headers: { ...AUTH, ...headers } })
}

function read (app: FastifyInstance, id: number, headers: Record<string, string> = {}) {
  return getPlant(app, id, { ...AUTH, ...headers })
}

const ifMatch = (etag: string) => ({ ...AUTH, 'if-match': etag })

forEachStore(t, (t, build) => {
  t.test('every answer with one plant has a strong ETag, the same exactly when name and tag are', async (t) => {
    const app = await build(t)
    const contents = [{ name: 'Fern' }, { name: 'Fern', tag: '' }, { name: 'Fern', tag: 'shade' }, { name: 'Fernshade' },
      { name: 'fern', tag: 'shade' }, { name: 'Fern', tag: 'Shade' }, { name: 'Fe', tag: 'rn' }, { name: 'é' }, { name: 'e\u0301' }]
    const etags = new Map<string, string>()
    for (const [i, content] of contents.entries()) {
      const created = await postPlant(app, { id: 100 + i, ...content })
      t.equal(created.statusCode, 200)
      t.match(created.headers.etag, STRONG, 'POST 200: a strong ETag')
      t.equal((await postPlant(app, { id: 100 + i, ...content })).headers.etag, created.headers.etag, 'a replay: the same')
      t.equal((await read(app, 100 + i)).headers.etag, created.headers.etag, 'GET 200: the same')
      // Another plant with the same content has the same ETag: it validates the content.
      t.equal((await postPlant(app, { id: 200 + i, ...content })).headers.etag, created.headers.etag, 'the same content: the same')
      etags.set(JSON.stringify(content), created.headers.etag as string)
    }
    t.equal(new Set(etags.values()).size, contents.length, 'different content, different ETags')
    assertError(t, await postPlant(app, { id: 100, name: 'Other' }), 409)
    t.equal((await postPlant(app, { id: 100, name: 'Other' })).headers.etag, undefined, 'a 409 has none')

    // PATCH 200: the ETag of the plant as it now is, whatever way it came to be so.
    const patched = await patchPlant(app, 102, { tag: null })
    t.equal(patched.headers.etag, etags.get('{"name":"Fern"}'))
    t.equal((await patchPlant(app, 102, { name: 'Fern', tag: 'Shade' })).headers.etag, etags.get('{"name":"Fern","tag":"Shade"}'))
    t.equal((await read(app, 102)).headers.etag, etags.get('{"name":"Fern","tag":"Shade"}'))
  })

  t.test('a plant deleted and created again: another ETag with other content, the same with the same', async (t) => {
    const app = await build(t)
    const first = (await postPlant(app, { id: 1, name: 'Basil', tag: 'herb' })).headers.etag as string
    t.equal((await del(app, 1)).statusCode, 204)
    const other = await postPlant(app, { id: 1, name: 'Mint', tag: 'herb' })
    t.not(other.headers.etag, first)
    t.equal((await read(app, 1)).headers.etag, other.headers.etag)
    assertError(t, await patchPlant(app, 1, { name: 'Sage' }, ifMatch(first)), 412)
    t.equal((await del(app, 1, { 'if-match': other.headers.etag as string })).statusCode, 204)
    t.equal((await postPlant(app, { id: 1, name: 'Basil', tag: 'herb' })).headers.etag, first, 'the first content again: its ETag again')
  })

  t.test('If-Match on PATCH: a stale or weak tag is a 412 that changes nothing; a current one, a list or * proceed', async (t) => {
    const app = await build(t)
    const v1 = (await postPlant(app, { id: 2, name: 'Rose', tag: 'red' })).headers.etag as string
    const v2res = await patchPlant(app, 2, { tag: 'white' }, ifMatch(v1))
    t.equal(v2res.statusCode, 200)
    const v2 = v2res.headers.etag as string
    t.not(v2, v1)
    for (const stale of [v1, `W/${v2}`, '"nope"', `${v1}, W/${v2}`, '', ' , ']) {
      const res = await patchPlant(app, 2, { name: 'Tulip' }, ifMatch(stale))
      assertError(t, res, 412, /^Plant 2 is not as the If-Match header expects/)
      t.equal(res.headers.etag, undefined, 'a 412 carries no ETag')
    }
    t.same((await read(app, 2)).json(), { name: 'Rose', tag: 'white' }, 'nothing changed')
    t.equal((await read(app, 2)).headers.etag, v2)
    t.equal((await patchPlant(app, 2, { name: 'Tulip' }, ifMatch(`"nope", ${v1} ,${v2}`))).statusCode, 200, 'a list naming the current one')
    t.equal((await patchPlant(app, 2, { tag: null }, ifMatch('*'))).statusCode, 200, '* matches the plant that exists')
    t.same((await read(app, 2)).json(), { name: 'Tulip' })
    // Without a plant, no ETag is current: a 412, where the same change without If-Match is a 404.
    assertError(t, await patchPlant(app, 3, { name: 'x' }, ifMatch('*')), 412)
    assertError(t, await patchPlant(app, 3, { name: 'x' }, ifMatch(v2)), 412)
    assertError(t, await patchPlant(app, 3, { name: 'x' }), 404)
    for (const malformed of ['abc', '"a" "b"', 'W/abc', '"a', '*, "a"']) {
      assertError(t, await patchPlant(app, 2, { name: 'x' }, ifMatch(malformed)), 400, /^headers\/if-match must be \* or a comma-separated list of entity tags/)
    }
    t.same((await read(app, 2)).json(), { name: 'Tulip' })
  })

  t.test('If-Match on DELETE: a stale tag is a 412 and the plant stays; a current one deletes it', async (t) => {
    const app = await build(t)
    const v1 = (await postPlant(app, { id: 4, name: 'Ivy' })).headers.etag as string
    const v2 = (await patchPlant(app, 4, { tag: 'climber' })).headers.etag as string
    assertError(t, await del(app, 4, { 'if-match': v1 }), 412, /nothing was changed/)
    assertError(t, await del(app, 4, { 'if-match': `W/${v2}` }), 412)
    assertError(t, await del(app, 4, { 'if-match': 'garbage' }), 400, /^headers\/if-match/)
    t.same((await read(app, 4)).json(), { name: 'Ivy', tag: 'climber' }, 'still there')
    t.equal((await del(app, 4, { 'if-match': v2 })).statusCode, 204)
    assertError(t, await del(app, 4, { 'if-match': v2 }), 412) // gone: no ETag is current
    assertError(t, await del(app, 4, { 'if-match': '*' }), 412)
    assertError(t, await del(app, 4), 404)
    t.equal((await postPlant(app, { id: 5, name: 'Moss' })).statusCode, 200)
    t.equal((await del(app, 5, { 'if-match': '*' })).statusCode, 204, '* deletes the plant that exists')
  })

  t.test('If-None-Match on GET: the current ETag (or *) is a 304 with that ETag and no body', async (t) => {
    const app = await build(t)
    const etag = (await postPlant(app, { id: 6, name: 'Palm' })).headers.etag as string
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await read(app, 6, { 'if-none-match': header })
      t.equal(res.statusCode, 304, header)
      t.equal(res.body, '', 'no body')
      t.equal(res.headers.etag, etag, 'the ETag')
      t.equal(res.headers['content-type'], undefined, 'no content type for no content')
    }
    const changed = await read(app, 6, { 'if-none-match': '"other"' })
    t.equal(changed.statusCode, 200)
    t.same(changed.json(), { name: 'Palm' })
    t.equal(changed.headers.etag, etag)
    const newer = (await patchPlant(app, 6, { tag: 'sun' })).headers.etag as string
    const after = await read(app, 6, { 'if-none-match': etag })
    t.equal(after.statusCode, 200, 'once it changed, the old ETag reads it again')
    t.equal(after.headers.etag, newer)
    assertError(t, await read(app, 7, { 'if-none-match': '*' }), 404)
    assertError(t, await read(app, 6, { 'if-none-match': 'garbage' }), 400, /^headers\/if-none-match/)
  })

  t.test('20 concurrent changes made against one ETag: exactly one 200, the rest 412', async (t) => {
    const app = await build(t)
    for (let round = 0; round < 3; round++) {
      const etag = (await postPlant(app, { id: 10 + round, name: 'start' })).headers.etag as string
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => patchPlant(app, 10 + round, { name: `writer ${i}` }, ifMatch(etag))))
      const winners = answers.filter((res) => res.statusCode === 200)
      t.equal(winners.length, 1, `round ${round}: one 200`)
      t.equal(answers.filter((res) => res.statusCode === 412).length, 19, `round ${round}: the rest 412`)
      t.same((await read(app, 10 + round)).json(), winners[0].json(), 'the plant is the winner\'s')
    }
  })

  t.test('20 concurrent deletes made against one ETag: exactly one 204, the rest 412', async (t) => {
    const app = await build(t)
    const etag = (await postPlant(app, { id: 20, name: 'Rose' })).headers.etag as string
    const statuses = (await Promise.all(Array.from({ length: 20 }, () => del(app, 20, { 'if-match': etag })))).map((res) => res.statusCode)
    t.equal(statuses.filter((s) => s === 204).length, 1)
    t.equal(statuses.filter((s) => s === 412).length, 19)
  })
})
