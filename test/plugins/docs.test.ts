import { readFileSync } from 'node:fs'
import { Validator } from '@seriousme/openapi-schema-validator'
import { Ajv } from 'ajv'
import Fastify from 'fastify'
import t from 'tap'
import docs from '../../plugins/docs.js'
import { ErrorBody, NewPlant, Plant, PlantPatch } from '../../schemas/index.js'
import { build, TOKEN } from '../helpers/build.js'

const PACKAGE = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))

const json = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema))
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })

// What each operation's success carries.
const SUCCESS: Record<string, unknown> = {
  'POST /plants': { 200: { 'application/json': { schema: ref('Plant') } } },
  'GET /plants/{id}': { 200: { 'application/json': { schema: ref('Plant') } }, 304: undefined },
  'PATCH /plants/{id}': { 200: { 'application/json': { schema: ref('Plant') } } },
  'GET /plants': { 200: { 'application/json': { schema: { type: 'array', items: ref('PlantListItem') } } } },
  'DELETE /plants/{id}': { 204: undefined },
  'GET /metrics': { 200: { 'text/plain; version=0.0.4; charset=utf-8': { schema: { type: 'string' } } } },
  'GET /openapi.json': { 200: { 'application/json': { schema: { type: 'object', additionalProperties: true } } } },
  'GET /docs': { 200: { 'text/html': { schema: { type: 'string' } } } },
  'GET /health': { 200: { 'application/json': { schema: { type: 'object' } } } },
  'GET /ready': { 200: { 'application/json': { schema: { type: 'object' } } } },
  'POST /webhooks': { 201: { 'application/json': { schema: ref('CreatedWebhookEndpoint') } } },
  'GET /webhooks': { 200: { 'application/json': { schema: { type: 'array', items: ref('WebhookEndpoint') } } } },
  'GET /webhooks/{id}': { 200: { 'application/json': { schema: ref('WebhookEndpoint') } } },
  'PATCH /webhooks/{id}': { 200: { 'application/json': { schema: ref('WebhookEndpoint') } } },
  'DELETE /webhooks/{id}': { 204: undefined },
  'POST /webhooks/{id}/rotate-secret': { 200: { 'application/json': { schema: ref('WebhookSecret') } } },
  'GET /webhooks/{id}/deliveries': { 200: { 'application/json': { schema: { type: 'array', items: ref('WebhookDelivery') } } } },
  'POST /webhooks/{id}/deliveries/{deliveryId}/retry': { 202: undefined },
  'GET /events': { 200: { 'application/json': { schema: { type: 'array', items: { anyOf: [ref('PlantCreatedFeedEvent'), ref('PlantUpdatedFeedEvent'), ref('PlantDeletedFeedEvent')] } } } } }
}

// The statuses each operation sends (CONTRACT.md; the seed shows 200 and 400 of POST /plants).
const OPERATIONS = {
  '/plants': { post: ['200', '400', '401', '403', '408', '409', '413', '415', '429', '503'], get: ['200', '400', '401', '403', '408', '429', '503'] },
  '/plants/{id}': {
    get: ['200', '304', '400', '401', '403', '404', '408', '412', '429', '503'],
    delete: ['204', '400', '401', '403', '404', '408', '412', '429', '503'],
    patch: ['200', '400', '401', '403', '404', '408', '412', '413', '415', '429', '503']
  },
  '/metrics': { get: ['200', '401', '403', '408', '429', '503'] },
  '/events': { get: ['200', '400', '401', '403', '408', '410', '429', '503'] },
  '/webhooks': { post: ['201', '400', '401', '403', '408', '409', '413', '415', '429', '503'], get: ['200', '400', '401', '403', '408', '429', '503'] },
  '/webhooks/{id}': {
    get: ['200', '400', '401', '403', '404', '408', '429', '503'],
    patch: ['200', '400', '401', '403', '404', '408', '413', '415', '429', '503'],
    delete: ['204', '400', '401', '403', '404', '408', '429', '503']
  },
  '/webhooks/{id}/rotate-secret': { post: ['200', '400', '401', '403', '404', '408', '429', '503'] },
  '/webhooks/{id}/deliveries': { get: ['200', '400', '401', '403', '404', '408', '429', '503'] },
  '/webhooks/{id}/deliveries/{deliveryId}/retry': { post: ['202', '400', '401', '403', '404', '408', '409', '429', '503'] },
  '/health': { get: ['200'] },
  '/ready': { get: ['200', '503'] },
  '/openapi.json': { get: ['200'] },
  '/docs': { get: ['200'] }
}

// The scope each operation of the API needs (CONTRACT.md, "Scopes").
const SCOPE: Record<string, string> = {
  'POST /plants': 'plants:write',
  'DELETE /plants/{id}': 'plants:write',
  'PATCH /plants/{id}': 'plants:write',
  'GET /plants': 'plants:read',
  'GET /plants/{id}': 'plants:read',
  'GET /metrics': 'metrics',
  'GET /events': 'events:read',
  ...Object.fromEntries(Object.keys(SUCCESS).filter((name) => name.includes(' /webhooks')).map((name) => [name, 'webhooks']))
}

t.test('GET /openapi.json: a valid OpenAPI 3.1 document, public', async (t) => {
  const app = await build(t)
  const res = await app.inject('/openapi.json')
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  const doc = res.json()

  const validator = new Validator()
  const result = await validator.validate(doc)
  t.same(result.errors, undefined, 'no validation error')
  t.equal(result.valid, true)
  t.equal(validator.version, '3.1')
  t.match(doc.openapi, /^3\.1\.\d+$/)
  t.same(doc.info, { title: 'Plant Store', version: '1.0.0', description: doc.info.description, license: doc.info.license }, 'seed §9: version 1.0.0')

  t.same((await app.inject('/docs/json')).json(), doc, 'the docs page shows the same document')
})

t.test('the document matches the seed\'s tables', async (t) => {
  const app = await build(t)
  const doc = (await app.inject('/openapi.json')).json()
  const { schemas, securitySchemes } = doc.components

  t.same(Object.keys(schemas).sort(), ['CreatedWebhookEndpoint', 'Error', 'NewPlant', 'NewWebhookEndpoint', 'Plant', 'PlantCreatedEvent', 'PlantCreatedFeedEvent', 'PlantDeletedEvent', 'PlantDeletedFeedEvent', 'PlantListItem', 'PlantPatch', 'PlantUpdatedEvent', 'PlantUpdatedFeedEvent',
    'WebhookDelivery', 'WebhookEndpoint', 'WebhookEndpointPatch', 'WebhookSecret'], 'the shared schemas, by name')

  // Seed §2, Plant: name (string, required), tag (string); never the id.
  t.equal(schemas.Plant.type, 'object')
  t.same(Object.keys(schemas.Plant.properties).sort(), ['name', 'tag'])
  t.match(schemas.Plant.properties, { name: { type: 'string' }, tag: { type: 'string' } })
  t.same(schemas.Plant.required, ['name'])

  // NewPlant: id (integer, int64, required), name (string, required), tag (string).
  t.equal(schemas.NewPlant.type, 'object')
  t.same(Object.keys(schemas.NewPlant.properties).sort(), ['id', 'name', 'tag'])
  t.match(schemas.NewPlant.properties, { id: { type: 'integer', format: 'int64' }, name: { type: 'string' }, tag: { type: 'string' } })
  t.same([...schemas.NewPlant.required].sort(), ['id', 'name'])

  // Error: error (integer, int32), message (string), both required.
  t.equal(schemas.Error.type, 'object')
  t.same(Object.keys(schemas.Error.properties).sort(), ['error', 'message'])
  t.match(schemas.Error.properties, { error: { type: 'integer', format: 'int32' }, message: { type: 'string' } })
  t.same([...schemas.Error.required].sort(), ['error', 'message'])

  // Generated from the TypeBox schemas, not kept by hand.
  t.same(schemas.Plant.properties, json(Plant.properties))
  t.same(schemas.NewPlant.properties, json(NewPlant.properties))
  t.same(schemas.Error.properties, json(ErrorBody.properties))

  // Seed §5: bearerAuth, HTTP authentication, scheme bearer.
  t.match(securitySchemes, { bearerAuth: { type: 'http', scheme: 'bearer', description: /plants:read, plants:write, webhooks, metrics or events:read/ } })
  t.same(Object.keys(securitySchemes.bearerAuth).sort(), ['description', 'scheme', 'type'])
  t.equal(doc.security, undefined, 'no document-wide requirement: the probes are public')

  t.same(Object.keys(doc.paths).sort(), Object.keys(OPERATIONS).sort(), 'every route, and only the routes of the API')
  for (const [path, methods] of Object.entries(OPERATIONS)) {
    t.same(Object.keys(doc.paths[path]), Object.keys(methods), `${path}: its methods`)
    for (const [method, statuses] of Object.entries(methods)) {
      const operation = doc.paths[path][method]
      const name = `${method.toUpperCase()} ${path}`
      t.same(Object.keys(operation.responses).sort(), statuses, `${name}: the statuses it sends`)
      for (const status of statuses.filter((s) => !s.startsWith('2') && s !== '304')) {
        t.same(operation.responses[status].content, { 'application/json': { schema: ref('Error') } }, `${name} ${status}: Error`)
        t.not(operation.responses[status].description, 'Default Response', `${name} ${status}: described`)
      }
      if (path.startsWith('/plants') || path.startsWith('/webhooks') || path === '/metrics' || path === '/events') {
        t.same(operation.security, [{ bearerAuth: [SCOPE[name]] }], `${name}: needs the bearer token with the scope ${SCOPE[name]}`)
        t.match(operation.responses[403].description, `\`${SCOPE[name]}\``, `${name} 403: names the scope`)
      } else {
        // With no document-wide requirement an operation without one is merely undeclared: public says [].
        t.same(operation.security, [], `${name}: public, said so`)
      }
      for (const [status, content] of Object.entries(SUCCESS[name] as object)) {
        t.match(operation.responses[status].content, content, `${name} ${status}: its body`)
      }
    }
  }

  // Seed §4: the body of POST /plants is required, application/json, NewPlant.
  t.same(doc.paths['/plants'].post.requestBody, { required: true, content: { 'application/json': { schema: ref('NewPlant') } } })
  t.match(doc.paths['/plants/{id}'].get.parameters, [{ in: 'path', name: 'id', required: true, schema: { type: 'integer', format: 'int64' } }])

  // A change is a JSON merge patch, taken in either media type; the preconditions are header parameters.
  t.same(doc.paths['/plants/{id}'].patch.requestBody, {
    required: true,
    content: { 'application/merge-patch+json': { schema: ref('PlantPatch') }, 'application/json': { schema: ref('PlantPatch') } }
  })
  t.same(schemas.PlantPatch.properties, json(PlantPatch.properties))
  t.equal(schemas.PlantPatch.required, undefined, 'every field may be left out')
  const headerParameters = (method: string) => doc.paths['/plants/{id}'][method].parameters
    .filter((p: { in: string }) => p.in === 'header').map((p: { name: string, required: boolean }) => [p.name, p.required])
  // RFC 9110 §13.2.2: both preconditions on every method, each bounded, with the 412 a failed one answers.
  for (const method of ['get', 'patch', 'delete']) {
    t.same(headerParameters(method), [['If-Match', false], ['If-None-Match', false]], `${method}: If-Match and If-None-Match`)
    t.match(doc.paths['/plants/{id}'][method].parameters.filter((p: { in: string }) => p.in === 'header'), [{ schema: { maxLength: 4096 } }, { schema: { maxLength: 4096 } }])
    t.match(doc.paths['/plants/{id}'][method].responses[412], { description: /If-Match names no current ETag/ })
  }
  t.match(doc.paths['/plants/{id}'].patch.responses[412], { description: /If-None-Match names its current ETag/ })
  t.match(doc.paths['/plants/{id}'].delete.responses[412], { description: /If-None-Match names its current ETag/ })
  t.same(doc.paths['/plants/{id}'].get.responses[304].content, undefined, '304: no body')
})

t.test('the document declares the response headers a client reads', async (t) => {
  const app = await build(t)
  const doc = (await app.inject('/openapi.json')).json()
  const header = (description: RegExp, schema: object) => ({ schema, description })

  // RFC 8288: the next page of the list.
  t.match(doc.paths['/plants'].get.responses[200].headers, { Link: header(/rel="next"/, { type: 'string' }) })
  t.same(Object.keys(doc.paths['/plants'].get.responses[200].headers), ['Link'])
  t.match(doc.paths['/webhooks'].get.responses[200].headers, { Link: header(/more endpoints follow/, { type: 'string', maxLength: Number }) })
  t.match(doc.paths['/webhooks'].get, { parameters: [{ name: 'limit', in: 'query', schema: { maximum: 100 } }, { name: 'cursor', in: 'query', schema: { maxLength: 256 } }] }, 'GET /webhooks: limit and cursor')
  t.match(doc.paths['/webhooks'].post.responses[409], { description: /WEBHOOK_ENDPOINT_LIMIT/ })

  const seen: Record<string, number> = { 401: 0, 403: 0, 429: 0, 503: 0, etag: 0 }
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, { headers?: object }> }>>)) {
    for (const [method, operation] of Object.entries(methods)) {
      const name = `${method.toUpperCase()} ${path}`
      for (const [status, response] of Object.entries(operation.responses)) {
        if (status === '401' || status === '403') {
          t.match(response.headers, { 'WWW-Authenticate': header(/Bearer realm="plant-store"/, { type: 'string' }) }, `${name} 401: WWW-Authenticate`)
        } else if (status === '429' || status === '503') {
          t.same(response.headers, { 'Retry-After': { schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 86400 }, description: 'Seconds to wait before retrying (RFC 9110)' } }, `${name} ${status}: Retry-After`)
        } else if (/^(POST \/plants|GET \/plants\/\{id\}|PATCH \/plants\/\{id\})$/.test(name) && (status === '200' || status === '304')) {
          t.match(response.headers, { ETag: header(/strong validator/, { type: 'string' }) }, `${name} ${status}: ETag`)
          t.same(Object.keys(response.headers ?? {}), ['ETag'], `${name} ${status}: ETag alone`)
          seen.etag++
        } else if (status !== '200' || !['GET /plants', 'GET /webhooks', 'GET /webhooks/{id}/deliveries', 'GET /events'].includes(name)) {
          t.equal(response.headers, undefined, `${name} ${status}: no header to declare`)
        }
        if (status in seen) seen[status]++
      }
    }
  }
  t.same(seen, { 401: 15, 403: 15, 429: 15, 503: 16, etag: 4 },
    'every 401, 403, 429 and 503 of the document: the API\'s five plant and eight webhook operations, /metrics, /events, and /ready; an ETag on each answer that carries one plant, and on the 304')
})

t.test('the document names its server and its license', async (t) => {
  const app = await build(t)
  const doc = (await app.inject('/openapi.json')).json()
  t.same(doc.servers, [{ url: '/', description: 'This service: the host that serves this document' }], 'relative: wherever it is served')
  t.equal(PACKAGE.license, 'MIT')
  t.same(doc.info.license, { name: PACKAGE.license, identifier: PACKAGE.license }, 'the license of package.json, by its SPDX identifier')
  t.same(doc.tags.map((tag: { name: string }) => tag.name), ['plants', 'webhooks', 'probes', 'operations', 'docs'], 'every tag an operation names')
  t.equal(doc.paths['/plants'].get.parameters.find((p: { name: string }) => p.name === 'limit').required, false, 'limit has a default')
  for (const path of ['/webhooks', '/webhooks/{id}/deliveries']) {
    t.equal(doc.paths[path].get.parameters.find((p: { name: string }) => p.name === 'limit').required, false, `${path}: limit has a default`)
  }
  t.match(doc.tags.find((tag: { name: string }) => tag.name === 'webhooks'), { description: /added, changed and deleted/ })
})

t.test('the document declares the events it sends: plantAdded, a POST of NewPlant, and the three typed payloads, with the Standard Webhooks headers', async (t) => {
  const app = await build(t)
  const doc = (await app.inject('/openapi.json')).json()
  t.same(Object.keys(doc.webhooks), ['plantAdded', 'plantCreated', 'plantUpdated', 'plantDeleted'])
  for (const [name, schema] of [['plantCreated', 'PlantCreatedEvent'], ['plantUpdated', 'PlantUpdatedEvent'], ['plantDeleted', 'PlantDeletedEvent']]) {
    const sent = doc.webhooks[name].post
    t.same(sent.requestBody.content, { 'application/json': { schema: ref(schema) } }, name)
    t.same(sent.parameters.map((p: { name: string }) => p.name), ['webhook-id', 'webhook-timestamp', 'webhook-signature'])
  }
  const { PlantCreatedEvent, PlantUpdatedEvent, PlantDeletedEvent, WebhookEndpoint, WebhookDelivery } = doc.components.schemas
  // Exact per type: its own constant type, and data with no key beyond the plant's.
  for (const [schema, type] of [[PlantCreatedEvent, 'plant.created'], [PlantUpdatedEvent, 'plant.updated']]) {
    t.same(Object.keys(schema.properties), ['type', 'timestamp', 'data'])
    t.same(schema.required, ['type', 'timestamp', 'data'])
    t.equal(schema.additionalProperties, false)
    t.same(schema.properties.type.enum, [type], `${type}: its type alone, not the other`)
    t.same(Object.keys(schema.properties.data.properties), ['id', 'name', 'tag'])
    t.same(schema.properties.data.required, ['id', 'name'])
    t.equal(schema.properties.data.additionalProperties, false, `${type}: data has no other key`)
  }
  t.same(PlantDeletedEvent.properties.type.enum, ['plant.deleted'])
  t.same(Object.keys(PlantDeletedEvent.properties.data.properties), ['id'])
  t.equal(PlantDeletedEvent.properties.data.additionalProperties, false)
  t.match(WebhookEndpoint.properties.events, { type: 'array', minItems: 1, maxItems: 3, uniqueItems: true, items: { enum: ['plant.created', 'plant.updated', 'plant.deleted'] } })
  t.same(WebhookDelivery.properties.type.enum, ['plant.created', 'plant.updated', 'plant.deleted'])
  const operation = doc.webhooks.plantAdded.post
  t.same(Object.keys(doc.webhooks.plantAdded), ['post'])
  t.same(operation.requestBody.content, { 'application/json': { schema: ref('NewPlant') } })
  t.equal(operation.requestBody.required, true)
  t.same(operation.parameters.map((p: { name: string, in: string, required: boolean }) => [p.name, p.in, p.required]),
    [['webhook-id', 'header', true], ['webhook-timestamp', 'header', true], ['webhook-signature', 'header', true]])
  t.same(Object.keys(operation.responses), ['410', '2XX', 'default'])
  t.same(doc.paths['/webhooks'].post.requestBody, { required: true, content: { 'application/json': { schema: ref('NewWebhookEndpoint') } } })
  t.same(doc.paths['/webhooks/{id}'].patch.requestBody, { required: true, content: { 'application/json': { schema: ref('WebhookEndpointPatch') } } })
})

t.test('GET /docs: the reference page and its assets, public and served by the service', async (t) => {
  const app = await build(t)
  const page = await app.inject('/docs')
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /^text\/html/)
  t.match(page.headers['content-security-policy'], /default-src 'self'/, 'the browser may load nothing from elsewhere')
  t.match(page.headers['x-request-id'], /./)

  const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1])
  t.ok(assets.length >= 4, 'scripts, styles and icons')
  for (const asset of assets) {
    t.match(asset, /^\/docs\/static\//, `${asset} is the service's own`)
    const res = await app.inject(asset)
    t.equal(res.statusCode, 200, asset)
  }
  const notFound = await app.inject('/docs/static/missing.js')
  t.equal(notFound.statusCode, 404)
  t.same(Object.keys(notFound.json()).sort(), ['error', 'message'], 'a missing asset has the Error body')
})

t.test('the docs plugin alone documents the routes of its host', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(docs)
  app.get('/hello', { schema: { response: { 200: { type: 'string' } } } }, async () => 'hi')
  await app.ready()
  const doc = (await app.inject('/openapi.json')).json()
  t.same(Object.keys(doc.paths), ['/openapi.json', '/docs', '/hello'])
  t.equal((await app.inject('/docs')).statusCode, 200)
})

t.test('the document and the service agree: webhook ids up to 128 characters, limit optional, payloads exact per type', async (t) => {
  const app = await build(t)
  const doc = (await app.inject('/openapi.json')).json()
  t.equal(doc.paths['/webhooks/{id}'].get.parameters.find((p: { name: string }) => p.name === 'id').schema.maxLength, 128)
  const headers = { authorization: `Bearer ${TOKEN}` }
  for (const id of ['a'.repeat(101), 'a'.repeat(128), 'é'.repeat(128)]) {
    for (const [method, url] of [['GET', `/webhooks/${encodeURIComponent(id)}`], ['POST', `/webhooks/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(id)}/retry`]] as const) {
      t.equal((await app.inject({ method, url, headers })).statusCode, 404, `${method} with an id of ${id.length}: valid, and unknown`)
    }
  }
  const tooLong = await app.inject({ url: `/webhooks/${'a'.repeat(129)}`, headers })
  t.equal(tooLong.statusCode, 400, 'one past the bound')
  t.match(tooLong.json().message, /^params\/id must be at most 128 characters long/)
  t.equal((await app.inject({ url: '/webhooks', headers })).statusCode, 200, 'GET /webhooks without limit')

  // What a receiver's validator makes of the document's payload schemas.
  const ajv = new Ajv({ strict: false, validateFormats: false })
  for (const [name, schema] of Object.entries(doc.components.schemas as Record<string, object>)) ajv.addSchema(schema, `#/components/schemas/${name}`)
  const valid = (name: string, body: unknown) => ajv.validate({ $ref: `#/components/schemas/${name}` }, body)
  const timestamp = '2026-01-01T12:00:00.000Z'
  t.ok(valid('PlantCreatedEvent', { type: 'plant.created', timestamp, data: { id: 1, name: 'Fern' } }))
  t.ok(valid('PlantUpdatedEvent', { type: 'plant.updated', timestamp, data: { id: 1, name: 'Fern', tag: 'shade' } }))
  t.notOk(valid('PlantCreatedEvent', { type: 'plant.updated', timestamp, data: { id: 1, name: 'Fern' } }), 'a created payload is not an updated one')
  t.notOk(valid('PlantUpdatedEvent', { type: 'plant.created', timestamp, data: { id: 1, name: 'Fern' } }))
  t.notOk(valid('PlantCreatedEvent', { type: 'plant.created', timestamp, data: { id: 1, name: 'Fern', extra: true } }), 'data has no other key')
  t.notOk(valid('PlantDeletedEvent', { type: 'plant.deleted', timestamp, data: { id: 1, name: 'Fern' } }))
})
