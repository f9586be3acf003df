import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'

// The page may load nothing from another origin: it must work with no internet,
// and a CSP that says so makes the browser enforce it. swagger-ui sets inline styles.
const CSP = "default-src 'self'; base-uri 'self'; connect-src 'self'; font-src 'self' data:; form-action 'self'; " +
  "frame-ancestors 'self'; img-src 'self' data:; object-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'"

/**
 * The API's description, generated from the route schemas: GET /openapi.json
 * (OpenAPI 3.1) and an interactive reference at /docs, both public. Registered
 * with fastify-plugin and before the routes, so it sees every route of the app
 * and the shared schemas of the root scope, which it names as components.
 */
const docs: FastifyPluginAsync = async (fastify) => {
  await fastify.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Plant Store',
        version: '1.0.0',
        description: 'Create a plant with the identification number you choose, and read it back.'
      },
      tags: [
        { name: 'plants', description: 'The plant store: every operation needs a bearer token' },
        { name: 'probes', description: 'Health and readiness, for load balancers and orchestrators' }
      ],
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } }
      }
    },
    // Shared schemas (all have an $id) keep it as their component name: Plant, NewPlant, Error.
    refResolver: { buildLocalReference: (json) => String(json.$id) }
  })

  fastify.get('/openapi.json', { schema: { hide: true } }, async () => fastify.swagger())

  await fastify.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: CSP,
    theme: { title: 'Plant Store API' },
    uiConfig: { deepLinking: true, docExpansion: 'list', defaultModelsExpandDepth: 2 }
  })
}

export default fp(docs, { name: 'plant-store-docs', fastify: '5.x' })
