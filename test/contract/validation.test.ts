import t from 'tap'
import { assertError, AUTH, getPlant, postPlant } from '../helpers/build.js'
import { forEachStore } from '../helpers/stores.js'

const INT64_MAX = '9223372036854775807'
const INT64_MIN = '-9223372036854775808'

forEachStore(t, (t, build) => {
  t.test('types are strict: no coercion', async (t) => {
    const app = await build(t)
    const cases: Array<[string, string]> = [
      ['{"id":"5","name":"Fern"}', 'body/id must be integer'],
      ['{"id":5.5,"name":"Fern"}', 'body/id must be integer'],
      ['{"id":true,"name":"Fern"}', 'body/id must be integer'],
      ['{"id":null,"name":"Fern"}', 'body/id must be integer'],
      ['{"id":[5],"name":"Fern"}', 'body/id must be integer'],
      ['{"id":5,"name":5}', 'body/name must be string'],
      ['{"id":5,"name":null}', 'body/name must be string'],
      ['{"id":5,"name":"Fern","tag":null}', 'body/tag must be string'],
      ['{"id":5,"name":"Fern","tag":5}', 'body/tag must be string'],
      ['{"name":"Fern"}', "body must have required property 'id'"],
      ['{"id":5}', "body must have required property 'name'"],
      ['[]', 'body must be object'],
      ['"plant"', 'body must be object'],
      ['null', 'body must be object']
    ]
    for (const [payload, message] of cases) {
      const res = await postPlant(app, payload)
      assertError(t, res, 400)
      t.equal(res.json().message, message, payload)
    }
    assertError(t, await getPlant(app, 5), 404, undefined)
  })

  t.test('int64 ids are exact over the whole signed range', async (t) => {
    const app = await build(t)
    t.equal((await postPlant(app, '{"id":9007199254740993,"name":"two^53+1"}')).statusCode, 200)
    t.equal((await postPlant(app, '{"id":9007199254740992,"name":"two^53"}')).statusCode, 200, 'a second plant, not a conflict')
    t.equal((await postPlant(app, `{"id":${INT64_MAX},"name":"max"}`)).statusCode, 200)
    t.equal((await postPlant(app, `{"id":${INT64_MIN},"name":"min","tag":"edge"}`)).statusCode, 200)
    t.equal((await postPlant(app, '{"id":0,"name":"zero"}')).statusCode, 200)
    t.equal((await postPlant(app, '{"id":-1,"name":"minus one"}')).statusCode, 200)

    t.same((await getPlant(app, '9007199254740993')).json(), { name: 'two^53+1' })
    t.same((await getPlant(app, '9007199254740992')).json(), { name: 'two^53' })
    t.same((await getPlant(app, INT64_MAX)).json(), { name: 'max' })
    t.same((await getPlant(app, INT64_MIN)).json(), { name: 'min', tag: 'edge' })
    t.same((await getPlant(app, '0')).json(), { name: 'zero' })
    t.same((await getPlant(app, '-1')).json(), { name: 'minus one' })
    assertError(t, await postPlant(app, '{"id":9007199254740993,"name":"other"}'), 409, /9007199254740993/)
  })

  t.test('ids outside int64 and fractions are a 400, decided by the exact decimal value', async (t) => {
    const app = await build(t)
    for (const id of ['9223372036854775808', '-9223372036854775809', '18446744073709551616', '1e19', '-1e19', '1e400', '9.3e18']) {
      const res = await postPlant(app, `{"id":${id},"name":"out"}`)
      assertError(t, res, 400, /^body\/id must be an integer from -9223372036854775808 to 9223372036854775807$/)
    }
    // Each is a fraction, though the nearest double is a whole number.
    for (const id of ['0.5', '-2.25', '4503599627370497.5', '9007199254740993.5', '1e-400', '-1e-400', '123456789.0000000001', '0.99999999999999999999']) {
      assertError(t, await postPlant(app, `{"id":${id},"name":"frac"}`), 400, /^body\/id must be integer$/)
    }
    assertError(t, await getPlant(app, '4503599627370498'), 404, undefined)
    assertError(t, await getPlant(app, '0'), 404, undefined)
  })

  t.test('an id written with a fraction or an exponent is the integer it denotes', async (t) => {
    const app = await build(t)
    const cases: Array<[string, string]> = [['10.0', '10'], ['1e15', '1000000000000000'], ['1e18', '1000000000000000000'],
      ['-0', '0'], ['0.1e1', '1'], ['9.223372036854775807e18', INT64_MAX], ['92233720368547758.07E2', INT64_MAX], ['-9223372036854775808.000', INT64_MIN]]
    for (const [literal, id] of cases) {
      const res = await postPlant(app, `{"id":${literal},"name":"n${id}"}`)
      t.equal(res.statusCode, 200, literal)
      t.same((await getPlant(app, id)).json(), { name: `n${id}` }, `${literal} is ${id}`)
    }
  })

  t.test('the id in the path follows the same rules', async (t) => {
    const app = await build(t)
    for (const id of ['9223372036854775808', '-9223372036854775809', '99999999999999999999999']) {
      assertError(t, await getPlant(app, id), 400, /^params\/id must be an integer from/)
    }
    for (const id of ['abc', '5.5', '1e3', '0x10', '%20', '+5', '5%20', '007', '+7', '-0', '7.0', '%207', '00', '-007']) {
      assertError(t, await getPlant(app, id), 400, /^params\/id must be integer$/)
    }
    assertError(t, await getPlant(app, INT64_MAX), 404)
  })

  t.test('the id in the path is canonical: no alias reads another plant', async (t) => {
    const app = await build(t)
    t.equal((await postPlant(app, '{"id":7,"name":"seven"}')).statusCode, 200)
    t.equal((await postPlant(app, '{"id":0,"name":"zero"}')).statusCode, 200)
    t.same((await getPlant(app, '7')).json(), { name: 'seven' })
    t.same((await getPlant(app, '0')).json(), { name: 'zero' })
    for (const alias of ['007', '+7', '-0', '07', '7.0']) {
      assertError(t, await getPlant(app, alias), 400, /^params\/id must be integer$/)
    }
  })

  t.test('strings are stored and returned exactly', async (t) => {
    const app = await build(t)
    const samples = ['🌱 Monstera deliciosa', 'Ünïcödé — “quotes” \\ / \n\t', 'x'.repeat(1000), '𝔉𝔢𝔯𝔫 \u200d\ufeff', ' padded ']
    for (const [i, name] of samples.entries()) {
      const tag = name.split('').reverse().join('').replace(/[\ud800-\udfff]/g, '').slice(0, 500)
      const res = await postPlant(app, { id: 100 + i, name, tag })
      t.equal(res.statusCode, 200)
      t.same(res.json(), { name, tag })
      t.same((await getPlant(app, 100 + i)).json(), { name, tag }, `read back ${name.slice(0, 20)}`)
    }
  })

  t.test('U+0000 and lone surrogates are a 400 in every store', async (t) => {
    const app = await build(t)
    for (const bad of ['a\\u0000b', '\\ud800', 'x\\udfff', '\\udc00\\ud800']) {
      assertError(t, await postPlant(app, `{"id":200,"name":"${bad}"}`), 400,
        /^body\/name must not contain U\+0000 or an unpaired UTF-16 surrogate$/)
      assertError(t, await postPlant(app, `{"id":200,"name":"ok","tag":"${bad}"}`), 400, /^body\/tag must not contain/)
    }
    assertError(t, await getPlant(app, 200), 404, undefined)
  })

  t.test('prototype poisoning is refused, on the fast and the exact parser', async (t) => {
    const app = await build(t)
    const bodies = [
      '{"id":300,"name":"p","__proto__":{"polluted":true}}',
      '{"id":300,"name":"p","constructor":{"prototype":{"polluted":true}}}',
      '{"id":9007199254740993,"name":"p","__proto__":{"polluted":true}}',
      '{"id":9007199254740993,"name":"p","constructor":{"prototype":{"polluted":true}}}',
      '{"id":300,"name":"p","nested":{"__proto__":{"polluted":true}}}'
    ]
    for (const body of bodies) {
      assertError(t, await postPlant(app, body), 400, /forbidden prototype property/)
    }
    t.equal(({} as Record<string, unknown>).polluted, undefined)
    t.equal((await postPlant(app, '{"id":301,"name":"c","constructor":"not a prototype"}')).statusCode, 200,
      'a plain constructor key is harmless, as in Fastify\'s own parser')
  })

  t.test('a body that is not JSON, or empty, is a 400', async (t) => {
    const app = await build(t)
    assertError(t, await postPlant(app, '{"id":1,'), 400, /^The request body is not valid JSON/)
    assertError(t, await postPlant(app, '{"id":12345678901234567,'), 400, /^The request body is not valid JSON/)
    assertError(t, await postPlant(app, ''), 400, /^The request body is empty/)
  })

  t.test('a body that is not application/json is a 415', async (t) => {
    const app = await build(t)
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const res = await app.inject({ method: 'POST', url: '/plants', headers: { ...AUTH, 'content-type': type }, payload: '{"id":1,"name":"x"}' })
      assertError(t, res, 415, /application\/json/)
    }
    const charset = await app.inject({ method: 'POST', url: '/plants', headers: { ...AUTH, 'content-type': 'application/json; charset=utf-8' }, payload: '{"id":1,"name":"x"}' })
    t.equal(charset.statusCode, 200, 'a charset parameter is fine')
  })

  t.test('a body over BODY_LIMIT is a 413', async (t) => {
    const app = await build(t, { BODY_LIMIT: '200' })
    t.equal((await postPlant(app, { id: 1, name: 'x'.repeat(150) })).statusCode, 200)
    assertError(t, await postPlant(app, { id: 2, name: 'x'.repeat(250) }), 413, /200 bytes/)
  })
})
