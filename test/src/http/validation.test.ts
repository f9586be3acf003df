import t from 'tap'
import { JsonFraction } from '../../../src/http/parse-json.js'
import { NewPlant, PlantParams } from '../../../schemas/index.js'
import { formatValidationErrors, int64ValidatorCompiler, readInt64 } from '../../../src/http/validation.js'
import { INT64_MAX, INT64_MIN } from '../../../src/shared/ids.js'

t.test('readInt64 accepts exactly the signed 64-bit integers', async (t) => {
  t.equal(readInt64(5, false), 5n)
  t.equal(readInt64(-0, false), 0n)
  t.equal(readInt64(INT64_MAX, false), INT64_MAX)
  t.equal(readInt64(INT64_MIN, false), INT64_MIN)
  t.match(readInt64(INT64_MAX + 1n, false), /^must be an integer from/)
  t.match(readInt64(INT64_MIN - 1n, false), /^must be an integer from/)
  t.match(readInt64(2 ** 60, false), /^must be an integer from/, 'an inexact double')
  t.equal(readInt64(1.5, false), 'must be integer')
  t.equal(readInt64(Number.NaN, false), 'must be integer')
  t.match(readInt64(Infinity, false), /^must be an integer from/, 'beyond a double, as the body parser gives 1e400')
  t.match(readInt64(-Infinity, false), /^must be an integer from/)
  t.equal(readInt64(new JsonFraction('1e-400'), false), 'must be integer', 'a fraction whose double is whole')
  t.equal(readInt64('5', false), 'must be integer', 'no coercion from text in a body')
  t.equal(readInt64(null, false), 'must be integer')
})

t.test('readInt64 reads canonical decimal text in a path', async (t) => {
  t.equal(readInt64('5', true), 5n)
  t.equal(readInt64('0', true), 0n)
  t.equal(readInt64('-7', true), -7n)
  t.equal(readInt64('-9223372036854775808', true), INT64_MIN)
  t.match(readInt64('9223372036854775808', true), /^must be an integer from/)
  for (const text of ['', '5.0', '1e3', ' 5', '5 ', '+5', '0x1f', 'five', '007', '00', '-0', '-007', '+0', '-']) t.equal(readInt64(text, true), 'must be integer', JSON.stringify(text))
})

t.test('the int64 bounds the document states (the doubles -2^63 and 2^63) are not what the validator compares', async (t) => {
  t.match(NewPlant.properties.id, { minimum: -(2 ** 63), exclusiveMaximum: 2 ** 63 })
  // Ajv warns (on the console) of a numeric bound on a schema it does not know to be a number.
  const warnings: unknown[] = []
  const warn = console.warn
  console.warn = (...args: unknown[]) => { warnings.push(args) }
  const compile = int64ValidatorCompiler([])
  const body = compile({ schema: NewPlant, httpPart: 'body' } as never) as (data: unknown) => boolean
  const path = compile({ schema: PlantParams, httpPart: 'params' } as never) as (data: unknown) => boolean
  console.warn = warn
  t.same(warnings, [], 'compiled without a warning: the bounds are left to the int64 keyword')
  // Beside 2^63 and -2^63, where a double cannot tell them apart: decided exactly.
  for (const id of [INT64_MAX, INT64_MIN, INT64_MAX - 1n, 2n ** 53n + 1n]) {
    t.ok(body({ id, name: 'x' }), `body ${id}`)
    t.ok(path({ id: String(id) }), `path ${id}`)
  }
  for (const id of [INT64_MAX + 1n, INT64_MIN - 1n]) {
    t.notOk(body({ id, name: 'x' }), `body ${id}`)
    t.notOk(path({ id: String(id) }), `path ${id}`)
  }
})

t.test('the message quotes an unknown parameter\'s name no longer than a message may be', async (t) => {
  const error = formatValidationErrors([{ keyword: 'additionalProperties', instancePath: '', schemaPath: '', params: { additionalProperty: 'x'.repeat(5000) } }], 'querystring')
  t.equal(error.message, `querystring/${'x'.repeat(200)} is not a parameter of this operation`)
})

t.test('a headers schema is applied as Fastify\'s own compiler applies it: names matched in lowercase', async (t) => {
  const { default: Fastify } = await import('fastify')
  const { Type } = await import('@sinclair/typebox')
  const schema = Type.Object({
    'If-Match': Type.Optional(Type.String({ maxLength: 3 })),
    'X-Count': Type.Integer({ minimum: 1, maximum: 9 })
  })
  const apps = [Fastify(), Fastify()]
  apps[1].setValidatorCompiler(int64ValidatorCompiler([]))
  for (const app of apps) {
    app.get('/', { schema: { headers: schema } }, async () => 'ok')
    t.teardown(() => app.close())
  }
  const cases: Array<Record<string, string>> = [
    { 'x-count': '5' }, { 'X-Count': '5' }, {}, { 'x-count': '5', 'if-match': 'abc' }, { 'x-count': '5', 'If-Match': 'abcd' }, { 'x-count': '0' }
  ]
  const statuses = async (app: typeof apps[number]) => Promise.all(cases.map(async (headers) => (await app.inject({ url: '/', headers })).statusCode))
  const ours = await statuses(apps[1])
  t.same(ours, await statuses(apps[0]), 'the same answers as Fastify\'s default compiler')
  t.same(ours, [200, 200, 400, 200, 400, 400], 'required and maxLength apply, whatever case the client writes')
})
