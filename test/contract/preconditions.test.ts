import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { assertError, AUTH, build, getPlant, patchPlant, postPlant } from '../helpers/build.js'
import { forEachStore } from '../helpers/stores.js'

// Every conditional header on every method, as RFC 9110 §13.2.2 orders them, and their bounds.

function del (app: FastifyInstance, id: number, headers: Record<string, string> = {}) {
  return app.inject({ method: 'DELETE', url: `/plants/${id}`, headers: { ...AUTH, ...headers } })
}

const read = (app: FastifyInstance, id: number, headers: Record<string, string>) => getPlant(app, id, { ...AUTH, ...headers })
const patch = (app: FastifyInstance, id: number, body: unknown, headers: Record<string, string>) => patchPlant(app, id, body, { ...AUTH, ...headers })

forEachStore(t, (t, build) => {
  t.test('If-Match on GET: naming no current ETag is a 412; naming it, a list with it, or * read the plant', async (t) => {
    const app = await build(t)
    const etag = (await postPlant(app, { id: 1, name: 'Fern' })).headers.etag as string
    for (const header of [etag, `"other", ${etag}`, '*']) {
      const res = await read(app, 1, { 'if-match': header })
      t.equal(res.statusCode, 200, header)
      t.same(res.json(), { name: 'Fern' })
      t.equal(res.headers.etag, etag)
    }
    for (const header of ['"other"', `W/${etag}`, '']) {
      assertError(t, await read(app, 1, { 'if-match': header }), 412, /^Plant 1 is not as the If-Match header expects/)
    }
    // If-Match comes first: a plant it fails is a 412 even where If-None-Match would be a 304.
    assertError(t, await read(app, 1, { 'if-match': '"other"', 'if-none-match': etag }), 412)
    t.equal((await read(app, 1, { 'if-match': etag, 'if-none-match': etag })).statusCode, 304)
    // No plant has no current ETag: If-Match fails, as on PATCH and DELETE; without it, a 404.
    assertError(t, await read(app, 2, { 'if-match': '*' }), 412)
    assertError(t, await read(app, 2, { 'if-none-match': '*' }), 404)
    assertError(t, await read(app, 1, { 'if-match': 'garbage' }), 400, /^headers\/if-match/)
  })

  t.test('If-None-Match on PATCH: naming the current ETag (weakly), or * for a plant that exists, is a 412 and nothing changes', async (t) => {
    const app = await build(t)
    const etag = (await postPlant(app, { id: 1, name: 'Fern' })).headers.etag as string
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await patch(app, 1, { name: 'Palm' }, { 'if-none-match': header })
      assertError(t, res, 412, /^Plant 1 is as the If-None-Match header names/)
      t.equal(res.headers.etag, undefined, 'a 412 carries no ETag')
    }
    assertError(t, await patch(app, 1, { name: 'Palm' }, { 'if-match': '"other"', 'if-none-match': '*' }), 412, /If-Match/)
    assertError(t, await patch(app, 1, { name: 'Palm' }, { 'if-match': '"other"', 'if-none-match': etag }), 412, /If-Match/)
    t.same((await read(app, 1, {})).json(), { name: 'Fern' }, 'nothing changed')
    const changed = await patch(app, 1, { name: 'Palm' }, { 'if-match': etag, 'if-none-match': '"other"' })
    t.equal(changed.statusCode, 200, 'an ETag it does not name: the change is made')
    t.same(changed.json(), { name: 'Palm' })
    assertError(t, await patch(app, 2, { name: 'x' }, { 'if-none-match': '*' }), 404, /^No plant has id 2/)
    assertError(t, await patch(app, 2, { name: 'x' }, { 'if-none-match': etag }), 404)
    assertError(t, await patch(app, 2, { name: 'x' }, { 'if-match': '*', 'if-none-match': '*' }), 412, /If-Match/)
    assertError(t, await patch(app, 1, { name: 'x' }, { 'if-none-match': 'garbage' }), 400, /^headers\/if-none-match/)
  })

  t.test('If-None-Match on DELETE: * keeps a plant that exists (412), an ETag it names keeps it too; another deletes it', async (t) => {
    const app = await build(t)
    const etag = (await postPlant(app, { id: 1, name: 'Fern' })).headers.etag as string
    for (const header of ['*', etag, `W/${etag}`]) {
      assertError(t, await del(app, 1, { 'if-none-match': header }), 412, /nothing was changed/)
    }
    t.same((await read(app, 1, {})).json(), { name: 'Fern' }, 'still there')
    t.equal((await del(app, 1, { 'if-none-match': '"other"' })).statusCode, 204)
    // No plant: * holds, and there is nothing to delete.
    assertError(t, await del(app, 1, { 'if-none-match': '*' }), 404)
    assertError(t, await del(app, 1, { 'if-none-match': etag }), 404)
    assertError(t, await del(app, 1, { 'if-match': etag, 'if-none-match': '"other"' }), 412)
  })

  t.test('20 concurrent changes guarded by If-None-Match of the content they write: exactly one 200, the rest 412', async (t) => {
    const app = await build(t)
    for (let round = 0; round < 3; round++) {
      const id = 10 + round
      await postPlant(app, { id, name: 'start' })
      // "Unless it is already Rose": the check and the write are one step, so only the first writes.
      const rose = (await postPlant(app, { id: 100 + round, name: 'Rose' })).headers.etag as string
      const answers = await Promise.all(Array.from({ length: 20 }, () => patch(app, id, { name: 'Rose' }, { 'if-none-match': rose })))
      t.equal(answers.filter((res) => res.statusCode === 200).length, 1, `round ${round}: one 200`)
      t.equal(answers.filter((res) => res.statusCode === 412).length, 19, `round ${round}: the rest 412`)
    }
  })
})

t.test('precondition headers: at most 4,096 characters, and a long one costs what a normal request does', async (t) => {
  const app = await build(t)
  const etag = (await postPlant(app, { id: 1, name: 'Fern' })).headers.etag as string
  const listAt = `${' '.repeat(4096 - etag.length)}${etag}`
  t.equal(listAt.length, 4096)
  t.equal((await read(app, 1, { 'if-match': listAt })).statusCode, 200, '4,096 characters that name the ETag')
  t.equal((await read(app, 1, { 'if-none-match': listAt })).statusCode, 304)
  for (const name of ['if-match', 'if-none-match']) {
    const pattern = new RegExp(`^headers/${name} must be at most 4096 characters long`)
    assertError(t, await read(app, 1, { [name]: ` ${listAt}` }), 400, pattern)
    assertError(t, await patch(app, 1, { name: 'x' }, { [name]: ` ${listAt}` }), 400, pattern)
    assertError(t, await del(app, 1, { [name]: ` ${listAt}` }), 400, pattern)
  }
  t.same((await read(app, 1, {})).json(), { name: 'Fern' }, 'nothing changed')

  // A run of spaces not followed by a comma once cost the event loop time quadratic in its length.
  const hostile = [`,${' '.repeat(15000)}x`, `,${' '.repeat(4094)}x`, `"a",${' '.repeat(4090)}x`]
  const time = async (headers: Record<string, string>): Promise<number> => {
    const start = process.hrtime.bigint()
    for (let i = 0; i < 20; i++) await read(app, 1, headers)
    return Number(process.hrtime.bigint() - start)
  }
  for (const header of hostile) {
    for (const name of ['if-match', 'if-none-match']) {
      t.equal((await read(app, 1, { [name]: header })).statusCode, 400)
      // Both paths warmed up, then the best of five rounds of each, interleaved: noise on a shared machine only adds time.
      await time({ [name]: etag })
      await time({ [name]: header })
      let normal = Infinity
      let long = Infinity
      for (let round = 0; round < 5; round++) {
        normal = Math.min(normal, await time({ [name]: etag }))
        long = Math.min(long, await time({ [name]: header }))
      }
      t.ok(long < 4 * normal, `${name} of ${header.length} characters: ${(long / normal).toFixed(2)}x a normal read`)
    }
  }
})

t.test('a precondition list: entity tags between commas, spaces and tabs around them, nothing else', async (t) => {
  const app = await build(t)
  const etag = (await postPlant(app, { id: 1, name: 'Fern' })).headers.etag as string
  for (const header of [`\t${etag}\t`, `,, "a" ,\t${etag},`, `W/"a", ${etag}`]) {
    t.equal((await read(app, 1, { 'if-match': header })).statusCode, 200, JSON.stringify(header))
  }
  for (const header of ['"a b"', '"a\u007f"', '"a"x', 'W/ "a"', 'w/"a"', `${etag} ${etag}`, '"a', '"a",*']) {
    assertError(t, await read(app, 1, { 'if-match': header }), 400, /^headers\/if-match must be \* or a comma-separated list of entity tags/)
  }
})
