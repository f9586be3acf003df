import t from 'tap'
import { AUTH, build } from '../../helpers/build.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

t.test('a sane incoming x-request-id is kept and returned', async (t) => {
  const app = await build(t)
  for (const id of ['abc', 'A.b_c-1:2', 'x'.repeat(128), '0f8fad5b-d9cb-469f-a165-70867728950e']) {
    const res = await app.inject({ url: '/plants/1', headers: { ...AUTH, 'x-request-id': id } })
    t.equal(res.headers['x-request-id'], id)
  }
})

t.test('anything else gets a fresh UUID instead', async (t) => {
  const app = await build(t)
  const seen = new Set<string>()
  for (const id of [undefined, '', 'x'.repeat(129), 'two words', 'a\tb', '<script>', 'ünïcode', 'a/b', 'a,b']) {
    const headers = id === undefined ? AUTH : { ...AUTH, 'x-request-id': id }
    const res = await app.inject({ url: '/plants/1', headers })
    const answered = res.headers['x-request-id'] as string
    t.match(answered, UUID, JSON.stringify(id))
    seen.add(answered)
  }
  t.equal(seen.size, 9, 'a different one each time')
})

t.test('every answer carries it: successes, errors, 404s, errors raised before routing', async (t) => {
  const app = await build(t)
  const cases = [
    { url: '/health' },
    { url: '/openapi.json' },
    { url: '/plants/1' },
    { url: '/plants/1', headers: AUTH },
    { url: '/plants/x', headers: AUTH },
    { url: '/nowhere' },
    { url: '/plants/%E0%A4%A', headers: AUTH },
    { url: `/plants/${'9'.repeat(200)}`, headers: AUTH },
    { method: 'POST' as const, url: '/plants', headers: { ...AUTH, 'content-type': 'text/plain' }, payload: 'x' }
  ]
  for (const request of cases) {
    const res = await app.inject({ ...request, headers: { ...request.headers, 'x-request-id': 'trace-me' } })
    t.equal(res.headers['x-request-id'], 'trace-me', `${request.url}: ${res.statusCode}`)
  }
})
