import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config/index.js'
import { AUTH, build, TOKEN } from '../helpers/build.js'
import { codeBlocks, readPage, tableRows } from '../helpers/markdown.js'
import { EXAMPLE_BASE, hasCurl } from '../helpers/walkthrough.js'

// docs/observability.md's table of metrics is what GET /metrics serves: each of the
// service's own metrics with its type, and no metric the service does not have; its
// request line and its scrape are the service's.

const run = promisify(execFile)
const PAGE = readPage('docs/observability.md')

t.test('the metrics table names every metric the service serves, with its type', async (t) => {
  const rows = tableRows(PAGE, 'Metrics').slice(1)
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

t.test("the page's request line has the fields of the service's, the token by the fingerprint the page computes", async (t) => {
  const example = codeBlocks(PAGE).find((block) => block.lang === 'json' && block.headings.at(-1) === 'Request ids and logs')
  t.ok(example, 'the page shows a request line')
  const lines: string[] = []
  const config = loadConfig({ API_TOKENS: TOKEN, LOG_LEVEL: 'info', DATABASE_URL: 'sqlite::memory:', MAX_EVENT_LOOP_DELAY: '0' })
  const app = await buildApp(config, { logStream: { write: (line) => { lines.push(line) } } })
  t.teardown(() => app.close())
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  await fetch(`${base}/plants`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: '{"id":1,"name":"Fern"}' })
  await app.close()
  const line = lines.map((text) => JSON.parse(text)).find((parsed) => parsed.msg === 'request completed')
  t.same(paths(JSON.parse(example?.code ?? '{}')), paths(line), 'the same fields, nested as the service writes them')
  const fingerprint = /`(printf [^`]+)`/.exec(PAGE)?.[1] as string
  const { stdout } = await run('sh', ['-c', fingerprint], { env: { PATH: process.env.PATH, TOKEN } })
  t.equal(stdout.trim(), line.req.token, `${fingerprint} gives the token's name in the log`)
})

t.test("the page's scrape of the metrics, run against the service, shows what it says", async (t) => {
  if (!await hasCurl()) {
    if (process.env.CI === 'true') throw new Error('no curl, and CI=true runs the page\'s commands: apt-get install -y curl')
    t.pass('needs curl', { skip: 'no curl on PATH (under CI=true this fails instead)' })
    return
  }
  const example = codeBlocks(PAGE).find((block) => block.lang === 'sh' && block.headings.at(-1) === 'Metrics')
  const [command, ...shown] = (example?.code ?? '').trimEnd().split('\n')
  const app = await build(t)
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  // What the page's figures count: three plants created, one path that is not there.
  for (const id of [1, 2, 3]) await fetch(`${base}/plants`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: `{"id":${id},"name":"Fern"}` })
  await fetch(`${base}/nowhere`)
  const { stdout } = await run('sh', ['-c', command.replaceAll(EXAMPLE_BASE, base)], { env: { PATH: process.env.PATH, TOKEN } })
  t.same(stdout.trimEnd().split('\n').sort(), shown.map((line) => line.replace(/^# /, '')).sort())
})

/** Where each value of a JSON object sits, as `a.b` paths. */
function paths (value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object') return [prefix]
  return Object.entries(value).flatMap(([key, inner]) => paths(inner, `${prefix}${key}.`)).sort()
}
