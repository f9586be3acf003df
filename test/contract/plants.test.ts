import t from 'tap'
import { AUTH, assertError, build, getPlant, postPlant } from '../helpers/build.js'
import { forEachStore } from '../helpers/stores.js'

forEachStore(t, (t, build0, databaseUrl) => {
  t.test('creates a plant without a tag and answers exactly {name}', async (t) => {
    const app = await build0(t)
    const res = await postPlant(app, { id: 1, name: 'Monstera' })
    t.equal(res.statusCode, 200)
    t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
    t.equal(res.body, '{"name":"Monstera"}', 'no id, no tag, no other key')
    const read = await getPlant(app, 1)
    t.equal(read.statusCode, 200)
    t.equal(read.headers['content-type'], 'application/json; charset=utf-8')
    t.equal(read.body, '{"name":"Monstera"}', 'tag is absent, not null')
  })

  t.test('creates a plant with a tag and reads it back', async (t) => {
    const app = await build0(t)
    const res = await postPlant(app, { id: 2, name: 'Aloe', tag: 'succulent' })
    t.equal(res.statusCode, 200)
    t.same(Object.keys(res.json()), ['name', 'tag'])
    t.same(res.json(), { name: 'Aloe', tag: 'succulent' })
    t.same((await getPlant(app, 2)).json(), { name: 'Aloe', tag: 'succulent' })
  })

  t.test('an empty tag is a tag, kept apart from no tag', async (t) => {
    const app = await build0(t)
    t.same((await postPlant(app, { id: 3, name: 'Ivy', tag: '' })).json(), { name: 'Ivy', tag: '' })
    t.same((await getPlant(app, 3)).json(), { name: 'Ivy', tag: '' })
    assertError(t, await postPlant(app, { id: 3, name: 'Ivy' }), 409)
  })

  t.test('unknown properties are ignored: not stored, not returned', async (t) => {
    const app = await build0(t)
    const res = await postPlant(app, { id: 4, name: 'Fern', colour: 'green', id2: 7, tag: 'shade' })
    t.equal(res.statusCode, 200)
    t.same(res.json(), { name: 'Fern', tag: 'shade' })
    t.same((await getPlant(app, 4)).json(), { name: 'Fern', tag: 'shade' })
    t.equal((await postPlant(app, { id: 4, name: 'Fern', tag: 'shade', colour: 'red' })).statusCode, 200,
      'an unknown property does not make a replay a conflict')
  })

  t.test('an identical retry is a replay: 200 with the same plant', async (t) => {
    const app = await build0(t)
    const first = await postPlant(app, { id: 10, name: 'Cactus', tag: 'desert' })
    const again = await postPlant(app, { id: 10, name: 'Cactus', tag: 'desert' })
    t.equal(again.statusCode, 200)
    t.equal(again.body, first.body)
    const noTag = await postPlant(app, { id: 11, name: 'Moss' })
    t.equal((await postPlant(app, { id: 11, name: 'Moss' })).body, noTag.body)
  })

  t.test('a different plant under a taken id is a 409, and the stored one stays', async (t) => {
    const app = await build0(t)
    await postPlant(app, { id: 20, name: 'Basil', tag: 'herb' })
    assertError(t, await postPlant(app, { id: 20, name: 'Mint', tag: 'herb' }), 409, /id 20/)
    assertError(t, await postPlant(app, { id: 20, name: 'Basil', tag: 'spice' }), 409)
    assertError(t, await postPlant(app, { id: 20, name: 'Basil' }), 409, undefined)
    t.same((await getPlant(app, 20)).json(), { name: 'Basil', tag: 'herb' })
  })

  t.test('concurrent creates of one id: one content wins, replays 200, others 409', async (t) => {
    const app = await build0(t)
    const bodies = Array.from({ length: 20 }, (_, i) => ({ id: 30, name: i % 2 === 0 ? 'Rose' : 'Tulip' }))
    const responses = await Promise.all(bodies.map((body) => postPlant(app, body)))
    const stored = (await getPlant(app, 30)).json()
    for (const [i, res] of responses.entries()) {
      t.equal(res.statusCode, bodies[i].name === stored.name ? 200 : 409)
    }
  })

  t.test('an unknown id is a 404', async (t) => {
    const app = await build0(t)
    assertError(t, await getPlant(app, 404404), 404, /404404/)
  })

  t.test('plants survive a restart on the same database', async (t) => {
    const url = await databaseUrl(t)
    const first = await build(t, { DATABASE_URL: url })
    t.equal((await postPlant(first, '{"id":9007199254740993,"name":"Olive","tag":"tree"}')).statusCode, 200)
    await first.close()
    const second = await build(t, { DATABASE_URL: url })
    t.same((await getPlant(second, '9007199254740993')).json(), { name: 'Olive', tag: 'tree' })
    assertError(t, await getPlant(second, '9007199254740992'), 404)
  })

  t.test('every plant route needs the bearer token', async (t) => {
    const app = await build0(t)
    assertError(t, await postPlant(app, { id: 1, name: 'x' }, {}), 401)
    assertError(t, await getPlant(app, 1, {}), 401)
    t.equal((await getPlant(app, 1, AUTH)).statusCode, 404)
  })
})
