// The Fastify reference: fastify with its defaults, @fastify/bearer-auth, and the
// TypeBox schemas of schemas/ for validation and serialization; no hooks, parser,
// logger or metrics of Plant Store's. On a Map it is bare Fastify, the least any
// Fastify service with these schemas spends; on a database, the minimal correct app.
import bearerAuth from '@fastify/bearer-auth'
import { Type } from '@sinclair/typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import { ErrorBody, MAX_PAGE, NewPlant, Plant, PlantListItem, PlantParams } from '../../schemas/index.js'
import type { NewPlant as Body, Plants } from './plants.js'

const PageQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 20 }),
  after: Type.Optional(Type.Integer())
})

export async function fastifyApp (plants: Plants, tokens: string[]): Promise<FastifyInstance> {
  const app = Fastify()
  const errors = { 400: ErrorBody, 404: ErrorBody, 409: ErrorBody }
  app.setErrorHandler(async (error: { statusCode?: number, message: string }, _request, reply) => {
    const status = error.statusCode ?? 500
    return await reply.code(status).send({ error: status, message: status < 500 ? error.message : 'Internal error.' })
  })
  app.get('/ready', async () => ({ status: 'ok' }))

  await app.register(async (api) => {
    await api.register(bearerAuth, { keys: new Set(tokens) })

    api.post('/plants', { schema: { body: NewPlant, response: { 200: Plant, ...errors } } }, async (request, reply) => {
      const body = request.body as Body
      const outcome = await plants.create(body)
      if (outcome === 'conflict') return await reply.code(409).send({ error: 409, message: `Plant ${body.id} exists with other fields.` })
      return body
    })

    api.get('/plants/:id', { schema: { params: PlantParams, response: { 200: Plant, ...errors } } }, async (request, reply) => {
      const found = await plants.get(Number((request.params as { id: number }).id))
      return found ?? await reply.code(404).send({ error: 404, message: 'No such plant.' })
    })

    api.get('/plants', { schema: { querystring: PageQuery, response: { 200: Type.Array(PlantListItem), ...errors } } }, async (request, reply) => {
      const { limit, after } = request.query as { limit: number, after?: number }
      // One more than the page: whether a next page exists.
      const items = await plants.page(limit + 1, after)
      if (items.length > limit) reply.header('link', `</plants?limit=${limit}&after=${items[limit - 1].id}>; rel="next"`)
      return items.slice(0, limit)
    })
  })
  return app
}
