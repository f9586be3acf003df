import type { RouteOptions } from 'fastify'
import t from 'tap'
import { describeApiRoute } from '../../../src/http/api-routes.js'
import { SCOPES, type Scope } from '../../../src/shared/scopes.js'
import { build } from '../../helpers/build.js'
import { hooksByRoute } from '../../helpers/routes.js'
import { bearer, INSUFFICIENT, scopedTokensFile } from '../../helpers/scopes.js'

const route = (schema?: RouteOptions['schema'], config?: RouteOptions['config']) => ({ method: 'GET', url: '/x', handler: async () => 'x', schema, config }) as RouteOptions

t.test('adds bearerAuth with the route\'s scope and the scope-wide statuses, keeping the route\'s own', async (t) => {
  const withSchema = route({ summary: 's', response: { 200: { type: 'string' }, 404: { type: 'string' } } }, { scope: 'plants:read' })
  describeApiRoute(withSchema)
  t.match(withSchema.schema, { summary: 's', security: [{ bearerAuth: ['plants:read'] }] })
  t.same(Object.keys(withSchema.schema?.response as object).sort(), ['200', '401', '403', '404', '408', '429', '503'])
  t.match((withSchema.schema?.response as Record<string, { description: string }>)[403].description, /`plants:read`/)

  const bare = route()
  describeApiRoute(bare)
  t.same(bare.schema?.security, [{ bearerAuth: [] }], 'no scope declared: none named')
  t.same(Object.keys(bare.schema?.response as object).sort(), ['401', '403', '408', '429', '503'], 'a route without a schema gets one')
  t.match((bare.schema?.response as Record<string, { description: string }>)[403].description, /every scope/)
})

// What the app serves without a token: the probes and the API's description.
const PUBLIC = /^(GET|HEAD) \/(health|ready|openapi\.json|docs(\/.*)?)$/

t.test('every route of the API declares one scope, and the auth plugin holds each token to it', async (t) => {
  const app = await build(t, { API_TOKENS_FILE: scopedTokensFile(t) })
  const doc = (await app.inject('/openapi.json')).json()
  const routes = hooksByRoute(app.printRoutes({ includeHooks: true, commonPrefix: false }))
  t.ok(routes.size > 20, 'the routes were read')
  const walked: string[] = []
  for (const [route, hooks] of routes) {
    const [method, path] = route.split(' ')
    if (!hooks.some((hook) => hook.startsWith('onRequest ') && hook.includes('"authenticate()"'))) {
      t.match(route, PUBLIC, `${route}: public, or else it would be authenticated`)
      continue
    }
    walked.push(route)
    // The document's requirement is made from the route's declared scope (HEAD is GET's twin there).
    const operation = doc.paths[path.replace(/:(\w+)/g, '{$1}')]?.[method === 'HEAD' ? 'get' : method.toLowerCase()]
    const declared: string[] | undefined = operation?.security?.[0]?.bearerAuth
    t.ok(declared?.length === 1 && (SCOPES as readonly string[]).includes(declared[0]), `${route} declares one scope (${JSON.stringify(declared)})`)
    const scope = declared?.[0] as Scope
    for (const token of SCOPES) {
      const res = await app.inject({ method, url: path.replace(/:(\w+)/g, '1'), headers: bearer(token) })
      if (token === scope) {
        t.not(res.statusCode, 403, `${route} with a ${token} token: allowed`)
        t.not(res.statusCode, 401)
      } else {
        t.equal(res.statusCode, 403, `${route} with a ${token} token: refused`)
        t.equal(res.headers['www-authenticate'], INSUFFICIENT(scope))
      }
    }
  }
  // 5 plant, 8 webhook, 1 metrics and 1 events operations, and the HEAD twins of their 7 GETs.
  t.equal(walked.length, 22, `the API's routes were walked: ${walked.join(', ')}`)
})
