import t from 'tap'
import { AUTH, build } from '../helpers/build.js'
import { readPage, tableRows } from '../helpers/markdown.js'

// docs/observability.md's table of metrics is what GET /metrics serves: each of the
// service's own metrics with its type, and no metric the service does not have.

t.test('the metrics table names every metric the service serves, with its type', async (t) => {
  const rows = tableRows(readPage('docs/observability.md'), 'Metrics').slice(1)
  const documented = new Map(rows.map(([name, type]) => [name.replaceAll('`', ''), type]))
  t.ok(documented.size >= 10, 'the table has its rows')

  // Redis on a loopback port nobody listens on: the shared limits' metrics are there, Redis down.
  const app = await build(t, { REDIS_URL: 'redis://127.0.0.1:1/7' })
  const text = (await app.inject({ url: '/metrics', headers: AUTH })).body
  const served = new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((match) => [match[1], match[2]]))
  const own = [...served].filter(([name]) => !/^(process|nodejs)_/.test(name))
  t.ok(own.length >= 10, 'the service serves its metrics')
  for (const [name, type] of own) t.equal(documented.get(name), type, `${name} is in the table as a ${type}`)
  for (const name of documented.keys()) {
    if (name.includes('*')) t.ok([...served.keys()].some((served) => served.startsWith(name.replace(/\*.*/, ''))), `${name}: Node's own are served`)
    else t.ok(served.has(name), `${name} is served`)
  }
})
