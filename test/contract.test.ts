import t from 'tap'
import { assertError, AUTH, build, getPlant, postPlant } from './helpers/build.js'

t.test('creates a plant without a tag and answers exactly {name}', async (t) => {
  const app = await build(t)
  const res = await postPlant(app, { id: 1, name: 'Monstera' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(res.body, '{"name":"Monstera"}')
  const read = await getPlant(app, 1)
  t.equal(read.statusCode, 200)
  t.equal(read.body, '{"name":"Monstera"}')
})
