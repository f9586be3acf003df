import t from 'tap'
import { MAX_NAME_LENGTH, MAX_TAG_LENGTH } from '../../schemas/index.js'
import { assertError, AUTH, build, getPlant, postPlant } from '../helpers/build.js'
import { forEachStore } from '../helpers/stores.js'

/** `count` different characters of four UTF-8 bytes each (U+1F300 onwards): text no store can compress. */
function wide (count: number, from = 0): string {
  return Array.from({ length: count }, (_, i) => String.fromCodePoint(0x1f300 + from + i)).join('')
}

t.test('the limits the contract states', async (t) => {
  t.equal(MAX_NAME_LENGTH, 1000)
  t.equal(MAX_TAG_LENGTH, 500)
})

t.test('every header the document bounds: the value at the bound passes its schema, one past it is a 400', async (t) => {
  const app = await build(t)
  await postPlant(app, { id: 1, name: 'Fern' })
  const doc = (await app.inject('/openapi.json')).json()
  const bounded: string[] = []
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, { parameters?: Array<{ in: string, name: string, schema: { maxLength?: number } }>, requestBody?: { content: Record<string, unknown> } }>>)) {
    for (const [method, operation] of Object.entries(methods)) {
      for (const { name, schema } of (operation.parameters ?? []).filter((parameter) => parameter.in === 'header' && parameter.schema.maxLength !== undefined)) {
        const limit = schema.maxLength as number
        bounded.push(`${method.toUpperCase()} ${path} ${name} ${limit}`)
        const send = (value: string) => app.inject({
          method: method.toUpperCase() as 'GET',
          url: path.replace('{id}', '1'),
          headers: { ...AUTH, [name]: value, ...(operation.requestBody === undefined ? {} : { 'content-type': Object.keys(operation.requestBody.content)[0] }) },
          ...(operation.requestBody === undefined ? {} : { payload: '{}' })
        })
        // A list of entity tags naming none: it passes the schema, and then names no plant.
        const at = `${' '.repeat(limit - 3)}"x"`
        t.not((await send(at)).statusCode, 400, `${method.toUpperCase()} ${path} ${name}: ${limit} characters pass`)
        assertError(t, await send(` ${at}`), 400, new RegExp(`^headers/${name.toLowerCase()} must be at most ${limit} characters long`))
      }
    }
  }
  t.same(bounded.sort(), ['delete', 'get', 'patch'].flatMap((method) => [`${method.toUpperCase()} /plants/{id} If-Match 4096`, `${method.toUpperCase()} /plants/{id} If-None-Match 4096`]).sort())
})

forEachStore(t, (t, build) => {
  t.test('a name of 1,000 and a tag of 500 code points, of four bytes each, are stored, read and listed by tag', async (t) => {
    const app = await build(t)
    const plants = [
      { id: 1, name: wide(1000), tag: wide(500, 1000) },
      { id: 2, name: 'x'.repeat(1000), tag: 'y'.repeat(500) },
      { id: 3, name: 'Fern', tag: wide(500, 1000) }
    ]
    for (const plant of plants) {
      const res = await postPlant(app, plant)
      t.equal(res.statusCode, 200, `plant ${plant.id}`)
      t.same(res.json(), { name: plant.name, tag: plant.tag })
      t.same((await getPlant(app, plant.id)).json(), { name: plant.name, tag: plant.tag }, 'read back exactly')
    }
    // The tag's index (PostgreSQL's btree among them) holds the longest tag of the widest characters.
    const listed = await app.inject({ url: `/plants?tag=${encodeURIComponent(wide(500, 1000))}`, headers: AUTH })
    t.equal(listed.statusCode, 200)
    t.same(listed.json(), [plants[0], plants[2]])
  })

  t.test('a longer name or tag: a 400 naming the field and the limit, and nothing stored', async (t) => {
    const app = await build(t)
    const name = /^body\/name must be at most 1000 characters long \(Unicode code points\)$/
    const tag = /^body\/tag must be at most 500 characters long \(Unicode code points\)$/
    assertError(t, await postPlant(app, { id: 1, name: 'x'.repeat(1001) }), 400, name)
    assertError(t, await postPlant(app, { id: 1, name: wide(1001) }), 400, name)
    assertError(t, await postPlant(app, { id: 1, name: 'Fern', tag: 'y'.repeat(501) }), 400, tag)
    assertError(t, await postPlant(app, { id: 1, name: 'Fern', tag: wide(501) }), 400, tag)
    // What PostgreSQL's tag index once refused with a 500.
    assertError(t, await postPlant(app, { id: 1, name: 'Fern', tag: 'y'.repeat(3000) }), 400, tag)
    assertError(t, await getPlant(app, 1), 404)

    const listed = await app.inject({ url: `/plants?tag=${encodeURIComponent(wide(501))}`, headers: AUTH })
    assertError(t, listed, 400, /^querystring\/tag must be at most 500 characters long \(Unicode code points\)$/)
  })

  t.test('a webhook description: up to 1,000 code points; longer is a 400 naming the limit', async (t) => {
    const app = await build(t)
    // A host name is accepted at registration, and registration never connects to it.
    const register = (description: string) => app.inject({ method: 'POST', url: '/webhooks', headers: AUTH, payload: { url: 'https://hooks.example.com/plants', description } })
    const created = await register(wide(1000))
    t.equal(created.statusCode, 201)
    t.equal(created.json().description, wide(1000))
    assertError(t, await register(wide(1001)), 400, /^body\/description must be at most 1000 characters long \(Unicode code points\)$/)
  })
})
