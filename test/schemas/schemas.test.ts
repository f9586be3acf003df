import { Type } from '@sinclair/typebox'
import t from 'tap'
import { ErrorBody, NewPlant, Plant, ref } from '../../schemas/index.js'

// The seed's section 2 tables, field by field.
t.test('Plant is {name, tag?} and nothing else', async (t) => {
  t.same(Object.keys(Plant.properties), ['name', 'tag'])
  t.same(Plant.required, ['name'])
  t.equal(Plant.properties.name.type, 'string')
  t.equal(Plant.properties.tag.type, 'string')
  t.equal(Plant.additionalProperties, false)
})

t.test('NewPlant is a Plant with a required int64 id', async (t) => {
  t.same(Object.keys(NewPlant.properties), ['id', 'name', 'tag'])
  t.same(NewPlant.required, ['id', 'name'])
  t.match(NewPlant.properties.id, { type: 'integer', format: 'int64' })
  t.equal(NewPlant.properties.name.type, 'string')
  t.equal(NewPlant.properties.tag.type, 'string')
})

t.test('Error is {error: int32, message}, both required', async (t) => {
  t.equal(ErrorBody.$id, 'Error')
  t.same(ErrorBody.required, ['error', 'message'])
  t.match(ErrorBody.properties.error, { type: 'integer', format: 'int32' })
  t.equal(ErrorBody.properties.message.type, 'string')
})

t.test('ref() points at a named schema', async (t) => {
  t.match(ref(Plant), { $ref: 'Plant' })
  t.throws(() => ref(Type.String()), /needs a schema with an \$id/)
})
