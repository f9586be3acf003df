import { createRequire } from 'node:module'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsync, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { stringifyExact } from '../src/shared/exact-json.js'
import { webhookEvents } from '../schemas/webhooks.js'

// The page may load nothing from another origin.
const CSP = "default-src 'self'; base-uri 'self'; connect-src 'self'; font-src 'self' data:; form-action 'self'; " +
  "frame-ancestors 'self'; img-src 'self' data:; object-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'"

// The package's own manifest, by self-reference: the same from the sources and from dist/.
const { license } = createRequire(import.meta.url)('plant-store/package.json') as { license: string }

const PAGE = '/docs'
const tags = ['docs']

// swagger-ui hides its routes from the document; its page is described here like any route.
function describePage (route: RouteOptions): void {
  if (route.url !== PAGE || route.method !== 'GET') return
  route.schema = {
    summary: 'The interactive API reference (this document, rendered)',
    operationId: 'docs',
    tags,
    security: [],
    produces: ['text/html'],
    response: { 200: Type.String({ maxLength: 65536, description: 'An HTML page; its scripts and styles come from this service only' }) }
  }
  // Fastify reuses these options for the page's `/docs/` twin once the hooks have run.
  route.config = { ...route.config, swaggerTransform: ({ schema }) => ({ schema, url: PAGE }) }
}

// A whole double beyond 2^53 as the integer it is (the int64 bounds, -2^63 and 2^63).
function exactIntegers (value: unknown): unknown {
  if (typeof value === 'number') return Number.isSafeInteger(value) || !Number.isInteger(value) ? value : BigInt(value)
  if (Array.isArray(value)) return value.map(exactIntegers)
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, exactIntegers(item)]))
}

/** The API's description, generated from the route schemas. */
const docs: FastifyPluginAsync = async (fastify) => {
  // Written once, on the first request: the routes are all known by then.
  let document: string | undefined
  await fastify.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Plant Store',
        version: '1.0.0',
        description: 'Create plants under the identification numbers you choose, read them back, list the store page by page, change them (safely, with ETags) and delete them.',
        license: { name: license, identifier: license }
      },
      // Relative: the host that serves this document, wherever it is deployed.
      servers: [{ url: '/', description: 'This service: the host that serves this document' }],
      tags: [
        { name: 'plants', description: 'The plant store: every operation needs a bearer token, with the scope plants:read to read and list, plants:write to create, change and delete' },
        { name: 'webhooks', description: 'Subscriptions to the plants added, changed and deleted, and their deliveries: every operation needs a bearer token with the scope webhooks' },
        { name: 'probes', description: 'Health and readiness, for load balancers and orchestrators' },
        { name: 'operations', description: 'Metrics for Prometheus: a bearer token with the scope metrics' },
        { name: 'docs', description: 'This document and its interactive reference' }
      ],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: 'A token of API_TOKENS (every scope) or of API_TOKENS_FILE (every scope, or those its line lists). ' +
              'Each operation names the scope it needs: plants:read, plants:write, webhooks, metrics or events:read; a token without it gets a 403.'
          }
        }
      },
      // OpenAPI 3.1: what this service sends, not what it serves.
      webhooks: webhookEvents
    },
    // Shared schemas (all have an $id) keep it as their component name: Plant, NewPlant, Error.
    refResolver: { buildLocalReference: (json) => String(json.$id) }
  })

  fastify.get('/openapi.json', {
    schema: {
      summary: 'This API document (OpenAPI 3.1)',
      operationId: 'openapi',
      tags,
      security: [],
      response: { 200: Type.Object({}, { additionalProperties: true, description: 'The OpenAPI 3.1 document, generated from the schemas that validate the requests' }) }
    }
  }, async (_request, reply) => {
    document ??= stringifyExact(exactIntegers(fastify.swagger()))
    return reply.type('application/json; charset=utf-8').send(document)
  })

  await fastify.register(async (page) => {
    page.addHook('onRoute', describePage)
    await page.register(swaggerUi, {
      routePrefix: PAGE,
      staticCSP: CSP,
      theme: { title: 'Plant Store API' },
      uiConfig: { deepLinking: true, docExpansion: 'list', defaultModelsExpandDepth: 2 }
    })
  })
}

export default fp(docs, { name: 'plant-store-docs', fastify: '5.x' })
