import type { RouteOptions } from 'fastify'
import t from 'tap'
import { describeApiRoute } from '../../src/api-routes.js'

const route = (schema?: RouteOptions['schema']) => ({ method: 'GET', url: '/x', handler: async () => 'x', schema }) as RouteOptions

t.test('adds bearerAuth and the scope-wide statuses, keeping the route\'s own', async (t) => {
  const withSchema = route({ summary: 's', response: { 200: { type: 'string' }, 404: { type: 'string' } } })
  describeApiRoute(withSchema)
  t.match(withSchema.schema, { summary: 's', security: [{ bearerAuth: [] }] })
  t.same(Object.keys(withSchema.schema?.response as object).sort(), ['200', '401', '404', '429', '503'])

  const bare = route()
  describeApiRoute(bare)
  t.same(Object.keys(bare.schema?.response as object).sort(), ['401', '429', '503'], 'a route without a schema gets one')
})
