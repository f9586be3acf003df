import { gzipSync } from 'node:zlib'
import t from 'tap'
import { NewPlant, PlantPatch } from '../../schemas/index.js'
import { assertError, AUTH, getPlant, patchPlant, postPlant } from '../helpers/build.js'
import { forEachStore } from '../helpers/stores.js'

const MERGE_PATCH = 'application/merge-patch+json'

t.test('the patch\'s fields are NewPlant\'s, with every rule and limit it gives them', async (t) => {
  const { description: _name, ...name } = NewPlant.properties.name
  const { description: _tag, ...tag } = NewPlant.properties.tag
  t.match(PlantPatch.properties.name, name)
  t.match(PlantPatch.properties.tag, { ...tag, type: ['string', 'null'] })
  t.same(PlantPatch.required, undefined, 'every field may be left out')
})

forEachStore(t, (t, build) => {
  t.test('a merge patch renames, sets the tag, removes it; the answer is the plant as it now is', async (t) => {
    const app = await build(t)
    t.equal((await postPlant(app, { id: 1, name: 'Fren', tag: 'greenhouse' })).statusCode, 200)
    const steps: Array<[unknown, object]> = [
      [{ name: 'Fern' }, { name: 'Fern', tag: 'greenhouse' }],
      [{ tag: 'shade' }, { name: 'Fern', tag: 'shade' }],
      [{ tag: null }, { name: 'Fern' }],
      [{ name: 'Palm', tag: 'sun' }, { name: 'Palm', tag: 'sun' }],
      [{ tag: '' }, { name: 'Palm', tag: '' }],
      [{ name: '🌱 Ünïcödé', color: 'green', nested: { id: 5 } }, { name: '🌱 Ünïcödé', tag: '' }]
    ]
    for (const [patch, plant] of steps) {
      const res = await patchPlant(app, 1, patch)
      t.equal(res.statusCode, 200, JSON.stringify(patch))
      t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
      t.same(res.json(), plant, 'the answer: the plant as it now is, Plant and nothing else')
      t.same((await getPlant(app, 1)).json(), plant, 'and as it is read back')
    }
    const list = await app.inject({ url: '/plants', headers: AUTH })
    t.same(list.json(), [{ id: 1, name: '🌱 Ünïcödé', tag: '' }], 'other keys were ignored, not stored')
  })

  t.test('both media types are taken, with the JSON body rules; anything else is a 415', async (t) => {
    const app = await build(t)
    t.equal((await postPlant(app, { id: 2, name: 'Ivy' })).statusCode, 200)
    for (const type of [MERGE_PATCH, 'application/json', `${MERGE_PATCH}; charset=utf-8`, 'application/json; charset=UTF-8']) {
      const res = await patchPlant(app, 2, { tag: type }, { ...AUTH, 'content-type': type })
      t.equal(res.statusCode, 200, type)
      t.same(res.json(), { name: 'Ivy', tag: type })
    }
    for (const charset of ['latin1', 'utf-16', '"utf-16"', 'utf8']) {
      assertError(t, await patchPlant(app, 2, { name: 'x' }, { ...AUTH, 'content-type': `${MERGE_PATCH}; charset=${charset}` }), 415, /charset/)
    }
    assertError(t, await patchPlant(app, 2, gzipSync('{"name":"x"}'), { ...AUTH, 'content-encoding': 'gzip' }), 415, /Content-Encoding/)
    for (const type of ['text/plain', 'application/json-patch+json', 'application/x-www-form-urlencoded']) {
      assertError(t, await patchPlant(app, 2, '{"name":"x"}', { ...AUTH, 'content-type': type }), 415,
        /^Unsupported media type: send the body as application\/merge-patch\+json or application\/json\.$/)
    }
    // A create is no merge patch.
    assertError(t, await postPlant(app, '{"id":3,"name":"x"}', { ...AUTH, 'content-type': MERGE_PATCH }), 415,
      /^Unsupported media type: send the body as application\/json\.$/)
    t.same((await getPlant(app, 2)).json(), { name: 'Ivy', tag: 'application/json; charset=UTF-8' }, 'nothing refused was applied')
  })

  t.test('types are strict; a null name and any id are a 400; the plant stays as it was', async (t) => {
    const app = await build(t)
    t.equal((await postPlant(app, { id: 4, name: 'Rose', tag: 'red' })).statusCode, 200)
    const cases: Array<[string, string]> = [
      ['{"name":null}', 'body/name must be string'],
      ['{"name":5}', 'body/name must be string'],
      ['{"name":["Rose"]}', 'body/name must be string'],
      ['{"tag":5}', 'body/tag must be string or null'],
      ['{"tag":false}', 'body/tag must be string or null'],
      ['{"tag":{}}', 'body/tag must be string or null'],
      ['{"id":4}', 'body/id must not be present'],
      ['{"id":5,"name":"Tulip"}', 'body/id must not be present'],
      ['{"id":null}', 'body/id must not be present'],
      ['[]', 'body must be object'],
      ['"Rose"', 'body must be object'],
      ['null', 'body must be object'],
      ['{"name":"a\\u0000b"}', 'body/name must not contain U+0000 or an unpaired UTF-16 surrogate'],
      ['{"tag":"\\ud800"}', 'body/tag must not contain U+0000 or an unpaired UTF-16 surrogate']
    ]
    for (const [payload, message] of cases) {
      const res = await patchPlant(app, 4, payload)
      assertError(t, res, 400)
      t.equal(res.json().message, message, payload)
    }
    assertError(t, await patchPlant(app, 4, ''), 400, /^The request body is empty/)
    assertError(t, await patchPlant(app, 4, '{"name":'), 400, /^The request body is not valid JSON/)
    assertError(t, await patchPlant(app, 4, Buffer.concat([Buffer.from('{"name":"caf'), Buffer.from([0xe9]), Buffer.from('"}')])), 400, /not valid UTF-8/)
    assertError(t, await patchPlant(app, 4, '{"name":"x","__proto__":{"polluted":true}}'), 400, /forbidden prototype property/)
    t.same((await getPlant(app, 4)).json(), { name: 'Rose', tag: 'red' })
  })

  t.test('strings are stored and returned exactly', async (t) => {
    const app = await build(t)
    t.equal((await postPlant(app, { id: 5, name: 'x' })).statusCode, 200)
    for (const name of ['🌱 Monstera deliciosa', 'Ünïcödé — “quotes” \\ / \n\t', 'e\u0301 é', ' padded ', '𝔉𝔢𝔯𝔫 \u200d\ufeff']) {
      t.same((await patchPlant(app, 5, { name, tag: name })).json(), { name, tag: name })
      t.same((await getPlant(app, 5)).json(), { name, tag: name })
    }
  })

  t.test('no plant: 404; a bad id: 400; a change that changes nothing: 200 with the plant', async (t) => {
    const app = await build(t)
    assertError(t, await patchPlant(app, 404, { name: 'x' }), 404, /^No plant has id 404\.$/)
    assertError(t, await patchPlant(app, '9223372036854775808', { name: 'x' }), 400, /^params\/id/)
    assertError(t, await patchPlant(app, '007', { name: 'x' }), 400, /^params\/id must be integer$/)
    assertError(t, await getPlant(app, 404), 404) // a patch creates nothing
    t.equal((await postPlant(app, '{"id":9007199254740993,"name":"Aloe"}')).statusCode, 200)
    t.equal((await postPlant(app, '{"id":9007199254740992,"name":"Aloe"}')).statusCode, 200)
    const before = await getPlant(app, '9007199254740993')
    for (const patch of [{}, { name: 'Aloe' }, { tag: null }, { name: 'Aloe', other: 1 }]) {
      const res = await patchPlant(app, '9007199254740993', patch)
      t.equal(res.statusCode, 200, JSON.stringify(patch))
      t.equal(res.body, '{"name":"Aloe"}')
      t.equal(res.headers.etag, before.headers.etag, 'the same ETag: nothing changed')
    }
    t.same((await patchPlant(app, '9007199254740993', { tag: 'exact' })).json(), { name: 'Aloe', tag: 'exact' })
    t.same((await getPlant(app, '9007199254740992')).json(), { name: 'Aloe' }, 'ids stay exact: its neighbour is untouched')
  })

  t.test('a body over BODY_LIMIT is a 413', async (t) => {
    const app = await build(t, { BODY_LIMIT: '200' })
    t.equal((await postPlant(app, { id: 6, name: 'x' })).statusCode, 200)
    t.equal((await patchPlant(app, 6, { name: 'y'.repeat(150) })).statusCode, 200)
    assertError(t, await patchPlant(app, 6, { name: 'z'.repeat(250) }), 413, /200 bytes/)
  })
})
