import t from 'tap'
import { AUTH, assertError, getPlant, postPlant } from '../helpers/build.js'
import { forEachStore } from '../helpers/stores.js'

function del (app: { inject: (o: object) => ReturnType<typeof getPlant> }, id: string | number, headers: Record<string, string> = AUTH) {
  return app.inject({ method: 'DELETE', url: `/plants/${id}`, headers })
}

forEachStore(t, (t, build) => {
  t.test('a delete answers 204 with no body; the plant is gone and a second delete is a 404', async (t) => {
    const app = await build(t)
    t.equal((await postPlant(app, { id: 7, name: 'Fern' })).statusCode, 200)
    const res = await del(app, 7)
    t.equal(res.statusCode, 204)
    t.equal(res.body, '', 'no body')
    t.equal(res.headers['content-type'], undefined, 'no content type for no content')
    assertError(t, await getPlant(app, 7), 404)
    assertError(t, await del(app, 7), 404, /No plant has id 7\./)
  })

  t.test('an id that never existed is a 404; a bad id is a 400', async (t) => {
    const app = await build(t)
    assertError(t, await del(app, 404), 404)
    assertError(t, await del(app, '9223372036854775808'), 400, /^params\/id/)
    assertError(t, await del(app, 'seven'), 400, /^params\/id/)
  })

  t.test('ids at the int64 ends and beyond 2^53 are deleted exactly', async (t) => {
    const app = await build(t)
    for (const id of ['9223372036854775807', '-9223372036854775808', '9007199254740993', '9007199254740992']) {
      t.equal((await postPlant(app, `{"id":${id},"name":"edge"}`)).statusCode, 200)
    }
    t.equal((await del(app, '9007199254740993')).statusCode, 204)
    t.equal((await getPlant(app, '9007199254740992')).statusCode, 200, 'its neighbour below 2^53+1 stays')
    t.equal((await del(app, '9223372036854775807')).statusCode, 204)
    t.equal((await del(app, '-9223372036854775808')).statusCode, 204)
    assertError(t, await getPlant(app, '9007199254740993'), 404)
  })

  t.test('of concurrent deletes of one id exactly one answers 204', async (t) => {
    const app = await build(t)
    for (let round = 0; round < 5; round++) {
      t.equal((await postPlant(app, { id: 50, name: 'Rose' })).statusCode, 200)
      const statuses = (await Promise.all(Array.from({ length: 20 }, () => del(app, 50)))).map((res) => res.statusCode)
      t.equal(statuses.filter((s) => s === 204).length, 1, `round ${round}: one 204`)
      t.equal(statuses.filter((s) => s === 404).length, 19, `round ${round}: the rest 404`)
    }
  })

  t.test('after a delete the id is free: a different plant under it is created, not a conflict', async (t) => {
    const app = await build(t)
    t.equal((await postPlant(app, { id: 8, name: 'Basil', tag: 'herb' })).statusCode, 200)
    t.equal((await del(app, 8)).statusCode, 204)
    const again = await postPlant(app, { id: 8, name: 'Mint' })
    t.equal(again.statusCode, 200)
    t.equal(again.body, '{"name":"Mint"}')
    t.equal((await getPlant(app, 8)).body, '{"name":"Mint"}')
    assertError(t, await postPlant(app, { id: 8, name: 'Basil', tag: 'herb' }), 409, undefined)
  })

  t.test('deleting needs the bearer token', async (t) => {
    const app = await build(t)
    await postPlant(app, { id: 9, name: 'Ivy' })
    assertError(t, await del(app, 9, {}), 401)
    assertError(t, await del(app, 9, { authorization: 'Bearer wrong' }), 401)
    t.equal((await getPlant(app, 9)).statusCode, 200, 'still there')
  })
})
