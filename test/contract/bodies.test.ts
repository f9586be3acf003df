import { gzipSync } from 'node:zlib'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { assertError, AUTH, getPlant, postPlant } from '../helpers/build.js'
import { forEachStore } from '../helpers/stores.js'

function post (app: FastifyInstance, payload: Buffer | string, headers: Record<string, string> = {}) {
  return app.inject({ method: 'POST', url: '/plants', headers: { ...AUTH, 'content-type': 'application/json', ...headers }, payload })
}

/** The bytes of `before`, one raw byte sequence, then `after`. */
function bytes (before: string, raw: number[], after: string): Buffer {
  return Buffer.concat([Buffer.from(before), Buffer.from(raw), Buffer.from(after)])
}

// Messages of the JavaScript engine, which a client must never see.
const ENGINE = /Unexpected|Cannot read|call stack|SyntaxError|TypeError|RangeError|undefined|is not valid JSON$|in JSON at/

forEachStore(t, (t, build) => {
  t.test('bytes that are not UTF-8 are a 400, never stored as U+FFFD', async (t) => {
    const app = await build(t)
    // Latin-1 "café" and "cafè": replaced with U+FFFD, the two would be one plant.
    assertError(t, await post(app, bytes('{"id":4100,"name":"caf', [0xe9], '"}')), 400, /^The request body is not valid UTF-8/)
    assertError(t, await post(app, bytes('{"id":4100,"name":"caf', [0xe8], '"}')), 400, /^The request body is not valid UTF-8/)
    const invalid = [[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf4, 0x90, 0x80, 0x80], [0x80]]
    for (const raw of invalid) {
      assertError(t, await post(app, bytes('{"id":4101,"name":"x', raw, '"}')), 400, /not valid UTF-8/)
      assertError(t, await post(app, bytes('{"id":4101,"name":"x","', raw, '":1}')), 400, /not valid UTF-8/)
    }
    assertError(t, await getPlant(app, 4100), 404, undefined)
    assertError(t, await getPlant(app, 4101), 404, undefined)
    t.equal((await post(app, Buffer.from('{"id":4102,"name":"café 🌱"}'))).statusCode, 200, 'UTF-8 itself is fine')
    t.same((await getPlant(app, 4102)).json(), { name: 'café 🌱' })
  })

  t.test('a charset other than utf-8, or any Content-Encoding, is a 415', async (t) => {
    const app = await build(t)
    const body = '{"id":4200,"name":"x"}'
    for (const charset of ['latin1', 'ISO-8859-1', 'utf-16', '"utf-16"', 'utf8', 'utf-8; charset=latin1', '"utf-8']) {
      assertError(t, await post(app, body, { 'content-type': `application/json; charset=${charset}` }), 415, /charset/)
    }
    for (const encoding of ['gzip', 'identity', 'br']) {
      assertError(t, await post(app, gzipSync(body), { 'content-encoding': encoding }), 415, /Content-Encoding/)
    }
    assertError(t, await getPlant(app, 4200), 404, undefined)
    for (const [i, type] of ['application/json; charset=UTF-8', 'application/json; charset="utf-8"', 'application/json;Charset = utf-8 '].entries()) {
      t.equal((await post(app, `{"id":${4201 + i},"name":"x"}`, { 'content-type': type })).statusCode, 200, type)
    }
  })

  t.test('a byte order mark is refused by name, on both parsers', async (t) => {
    const app = await build(t)
    for (const id of ['4300', '1234567890123456']) {
      const res = await post(app, bytes('', [0xef, 0xbb, 0xbf], `{"id":${id},"name":"bom"}`))
      assertError(t, res, 400, /^The request body starts with a byte order mark/)
    }
    assertError(t, await getPlant(app, 4300), 404, undefined)
  })

  t.test('nesting deeper than 64 levels is refused by name, on both parsers', async (t) => {
    const app = await build(t)
    const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels)
    // As deep as a plant write's body limit allows (the parser's own tests go deeper).
    for (const id of ['4400', '1234567890123456']) {
      for (const levels of [64, 15_000]) {
        const res = await postPlant(app, `{"id":${id},"name":"deep","extra":${nested(levels)}}`)
        assertError(t, res, 400, /^The request body nests arrays and objects deeper than 64 levels\.$/)
      }
      assertError(t, await postPlant(app, `{"id":${id},"name":"deep","extra":${'['.repeat(30_000)}`), 400, /deeper than 64 levels/)
      t.equal((await postPlant(app, `{"id":${id},"name":"deep","extra":${nested(63)}}`)).statusCode, 200, '64 levels with the body')
    }
  })

  t.test('no 400 carries a message of the JavaScript engine', async (t) => {
    const app = await build(t)
    const bodies = ['{"id":1,', '{"id":12345678901234567,', '{"id":1,"name":"x"}x', '{"id":1 "name":"x"}', '[1,]', '{"a":"\\x"}',
      '{"a":"\u0001"}', 'nul', '{"id":01}', '{"id":1.}', '{"id":-}', '{"id":1e}', '{"id":.5}', '{"id":+1}', '{"id":NaN}',
      '{"id":Infinity}', '\u00a0{}', "{'id':1}", '{"a":1,}', '{"a"}', '"\\u12"', '{"id":12345678901234567,"a":[1,]}', ']', '{"a":tru}']
    for (const body of bodies) {
      const res = await postPlant(app, body)
      assertError(t, res, 400, /^The request body is not valid JSON: (unexpected character at|it ends at) position \d+/)
      t.notMatch(res.json().message, ENGINE, body)
    }
  })
})
