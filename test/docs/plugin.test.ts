import Fastify, { type RouteOptions } from 'fastify'
import t from 'tap'
import plants from '../../plugins/plants/index.js'
import { openSqliteStore } from '../../src/store/sqlite/index.js'
import { readPage, tableRows } from '../helpers/markdown.js'

// docs/plugin.md is held to the plugin: its table of routes is what the plugin registers
// (each route, its scope, the media types its body takes, its statuses), read from the
// routes themselves, so that the page cannot fall behind the next route or status.

const PAGE = readPage('docs/plugin.md')

interface Route { scope: string, body: string[], statuses: string[], errorBodies: string[], bodyLimit?: number }

/** The plugin's routes, as registered on a bare Fastify, by `METHOD /path/{param}`. */
async function registered (options: { bodyLimit?: number } = {}): Promise<Map<string, Route>> {
  const store = openSqliteStore({ path: ':memory:' })
  const app = Fastify()
  const routes = new Map<string, Route>()
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = ([] as string[]).concat(route.method).filter((method) => method !== 'HEAD')
    const schema = route.schema as { body?: unknown, consumes?: string[], response?: Record<string, unknown> } | undefined
    for (const method of methods) {
      routes.set(`${method} ${route.url.replace(/:(\w+)/g, '{$1}')}`, {
        scope: route.config?.scope ?? '',
        // The plugin's JSON parser takes application/json; a route that takes more says so in its schema.
        body: schema?.body === undefined ? [] : schema.consumes ?? ['application/json'],
        statuses: Object.keys(schema?.response ?? {}),
        errorBodies: Object.entries(schema?.response ?? {}).filter(([, answer]) => (answer as { $ref?: string }).$ref === 'Error').map(([status]) => status),
        bodyLimit: route.bodyLimit
      })
    }
  })
  await app.register(plants, { store, ...options })
  await app.ready()
  await app.close()
  await store.close()
  return routes
}

t.test("the page's routes are the plugin's, with their scopes, media types and statuses", async (t) => {
  const rows = tableRows(PAGE, 'Routes').slice(1)
  const routes = await registered()
  t.ok(routes.size >= 5, 'the plugin\'s routes were read')
  const documented = rows.map(([route]) => /^`([A-Z]+ \S+)`$/.exec(route)?.[1] ?? route)
  t.same([...documented].sort(), [...routes.keys()].sort(), 'every route the plugin registers, once, and no other')
  for (const [cell, scope, body, statuses] of rows) {
    const name = cell.replaceAll('`', '')
    const route = routes.get(name)
    if (route === undefined) continue
    t.equal(scope.replaceAll('`', ''), route.scope, `${name}: its scope`)
    t.same(body === '' ? [] : body.split(', ').map((type) => type.replaceAll('`', '')), route.body, `${name}: the media types of its body`)
    t.same(statuses.split(', '), route.statuses, `${name}: its statuses`)
  }
  t.match(PAGE, 'Every status but `200`, `204` and `304` comes with the Error body')
  for (const [name, route] of routes) {
    t.same(route.errorBodies, route.statuses.filter((status) => !['200', '204', '304'].includes(status)), `${name}: the Error body on every other status`)
  }
  // The page says the auth in front answers these, never the plugin.
  t.match(PAGE, 'The\nroutes declare no `401`, `403` or `429`')
  for (const [name, route] of routes) {
    t.notOk(route.statuses.some((status) => ['401', '403', '429'].includes(status)), `${name} declares none of 401, 403, 429`)
  }
})

t.test("the page's bodyLimit names every route that reads a body, and the limit bounds each", async (t) => {
  const limit = tableRows(PAGE, 'Options').find(([option]) => option === '`bodyLimit`')?.[2] ?? ''
  const routes = await registered({ bodyLimit: 100 })
  for (const [name, route] of routes) {
    if (route.body.length === 0) continue
    t.ok(limit.includes(`\`${name}\``), `the bodyLimit option names ${name}`)
    t.equal(route.bodyLimit, 100, `${name} reads no more than bodyLimit`)
  }
  const store = tableRows(PAGE, 'Options').find(([option]) => option === '`store`')?.[2] ?? ''
  t.match(store, 'a `PlantsStore`: `create`, `update`, `delete`, `get`, `list` and `cursorKey`', 'the store option names what the port asks for')
})

t.test('each media type the page gives a body is one the route takes; another is a 415', async (t) => {
  const store = openSqliteStore({ path: ':memory:' })
  const app = Fastify()
  t.teardown(async () => { await app.close(); await store.close() })
  await app.register(plants, { store })
  for (const [cell, , body] of tableRows(PAGE, 'Routes').slice(1)) {
    if (body === '') continue
    const [method, path] = cell.replaceAll('`', '').split(' ')
    const url = path.replace('{id}', '1')
    for (const type of [...body.split(', ').map((type) => type.replaceAll('`', '')), 'text/plain']) {
      const res = await app.inject({ method: method as 'POST', url, headers: { 'content-type': type }, payload: '{}' })
      if (type === 'text/plain') t.equal(res.statusCode, 415, `${method} ${path} refuses ${type}`)
      else t.not(res.statusCode, 415, `${method} ${path} takes ${type}`)
    }
  }
})
