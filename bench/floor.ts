// The floor every row of the bench is measured against: bare Fastify with
// @fastify/bearer-auth, the TypeBox schemas the service validates and serializes
// with, and a Map. No store, no hooks of ours, no exact-id parser, no access log:
// what any Fastify service with a bearer token and these schemas must spend. A
// row's distance from it is the whole cost of what the service adds.
import bearerAuth from '@fastify/bearer-auth'
import { Type } from '@sinclair/typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import { ErrorBody, NewPlant, Plant, PlantListItem, PlantParams } from '../schemas/index.js'

interface Stored { name: string, tag?: string }

/** The floor's app, with plants 1 to `count` (as in the service's big store), the tokens of API_TOKENS. */
export async function floorApp (count: number, tokens: string[]): Promise<FastifyInstance> {
  const plants = new Map<number, Stored>()
  for (let id = 1; id <= count; id++) plants.set(id, { name: `plant ${id}`, tag: 'bench' })
  const firstPage = Array.from({ length: 100 }, (_, i) => ({ id: i + 1, name: `plant ${i + 1}`, tag: 'bench' }))

  const app = Fastify()
  // @fastify/bearer-auth answers its 401s with a body of its own.
  const errors = { 400: ErrorBody, 404: ErrorBody }
  const Page = Type.Array(PlantListItem)
  const Limit = Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }) })

  // The bench waits for /ready on every server, without a token.
  app.get('/ready', async () => ({ status: 'ok' }))

  await app.register(async (api) => {
    await api.register(bearerAuth, { keys: new Set(tokens) })

    api.post('/plants', { schema: { body: NewPlant, response: { 200: Plant, ...errors } } }, async (request) => {
      const { id, name, tag } = request.body as { id: number, name: string, tag?: string }
      const plant = tag === undefined ? { name } : { name, tag }
      plants.set(id, plant)
      return plant
    })

    api.get('/plants/:id', { schema: { params: PlantParams, response: { 200: Plant, ...errors } } }, async (request, reply) => {
      const plant = plants.get(Number((request.params as { id: number }).id))
      if (plant === undefined) return await reply.code(404).send({ error: 404, message: 'No such plant.' })
      return plant
    })

    api.get('/plants', { schema: { querystring: Limit, response: { 200: Page, ...errors } } }, async (request) =>
      firstPage.slice(0, (request.query as { limit: number }).limit))
  })
  return app
}
