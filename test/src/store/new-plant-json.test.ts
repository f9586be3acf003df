import t from 'tap'
import { stringifyNewPlant } from '../../../src/store/new-plant-json.js'

t.test('ids are exact at both int64 ends and beyond 2^53', async (t) => {
  for (const id of [-9223372036854775808n, -9007199254740993n, 0n, 9007199254740993n, 9223372036854775807n]) {
    t.equal(stringifyNewPlant({ id, name: 'x' }), `{"id":${id},"name":"x"}`)
  }
})

t.test('keys in the schema order; tag absent when none, kept when empty; nothing else', async (t) => {
  t.equal(stringifyNewPlant({ tag: 'climber', name: 'Monstera', id: 1n }), '{"id":1,"name":"Monstera","tag":"climber"}')
  t.equal(stringifyNewPlant({ id: 1n, name: 'Fern', tag: undefined }), '{"id":1,"name":"Fern"}')
  t.equal(stringifyNewPlant({ id: 1n, name: 'Fern', tag: '' }), '{"id":1,"name":"Fern","tag":""}')
  t.equal(stringifyNewPlant({ id: 1n, name: 'Fern', other: true } as never), '{"id":1,"name":"Fern"}')
})

t.test('strings are written as JSON.stringify writes them', async (t) => {
  for (const text of ['quote " backslash \\ slash /', 'control \u0001\n\t', 'é 中 🌱 \u2028', 'x'.repeat(100) + '"']) {
    t.equal(stringifyNewPlant({ id: 1n, name: text, tag: text }), `{"id":1,"name":${JSON.stringify(text)},"tag":${JSON.stringify(text)}}`)
  }
})
