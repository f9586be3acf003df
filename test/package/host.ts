// A host app that uses plant-store as an installed package: test/package.test.ts
// compiles it against the published types, starts it and talks to it over HTTP.
import { createRequire } from 'node:module'
import Fastify, { type FastifyError, type FastifyReply, type FastifyRequest } from 'fastify'
import auth from 'plant-store/auth'
import plants from 'plant-store/plants'
import { openSqliteStore } from 'plant-store/store'

const token = process.env.API_TOKEN ?? ''
const key = process.env.HOST_KEY ?? ''
const reader = process.env.READ_TOKEN ?? ''

const store = openSqliteStore({ path: ':memory:' })
const other = openSqliteStore({ path: ':memory:' })

const app = Fastify()
app.addHook('onClose', async () => { await Promise.all([store.close(), other.close()]) })

// The host's own error format, for its own routes and its own 404s.
function hostError (error: FastifyError, _request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return reply.code(error.statusCode ?? 500).send({ ok: false, reason: error.message })
}
app.setErrorHandler(hostError)
app.setNotFoundHandler((request, reply) => reply.code(404).send({ ok: false, reason: `nothing at ${request.url}` }))

app.get('/hello', async () => ({ ok: true }))
app.post('/echo', async (request) => ({ ok: true, body: request.body }))
app.get('/boom', async () => { throw Object.assign(new Error('host failure'), { statusCode: 418 }) })

// /v1: our bearer auth guards the plants.
app.register(async (v1) => {
  await v1.register(auth, { tokens: [token] })
  await v1.register(plants, { store })
}, { prefix: '/v1' })

// /v3: our bearer auth with the scopes the plants routes declare: one token may only read.
app.register(async (v3) => {
  await v3.register(auth, { tokens: [token, { token: reader, scopes: ['plants:read'] }] })
  await v3.register(plants, { store })
}, { prefix: '/v3' })

// /v2: the host's own auth, which replies in the host's format.
app.register(async (v2) => {
  v2.addHook('onRequest', async (request, reply) => {
    if (request.headers['x-host-key'] !== key) return reply.code(401).send({ ok: false, reason: 'unknown key' })
  })
  await v2.register(plants, { store })
}, { prefix: '/v2' })

// /open: no auth at all, and a store of its own.
app.register(plants, { store: other, prefix: '/open' })

// What the root scope can see of what the plugins registered.
app.get('/probe', async () => {
  const loaded = Object.keys(createRequire(import.meta.url).cache)
  return {
    schemas: Object.keys(app.getSchemas()),
    // Fastify keeps the handler bound to its instance.
    errorHandler: app.errorHandler.name,
    textParser: app.hasContentTypeParser('text/plain'),
    decorators: ['verifyBearerAuth'].filter((name) => app.hasDecorator(name)),
    requestDecorators: ['tokenDigest', 'bearerAuth'].filter((name) => app.hasRequestDecorator(name)),
    routes: app.printRoutes({ includeHooks: true, commonPrefix: false }),
    pgLoaded: loaded.some((file) => /[\\/]node_modules[\\/]pg[\\/]/.test(file)),
    sqliteLoaded: loaded.some((file) => /[\\/]node_modules[\\/]better-sqlite3[\\/]/.test(file))
  }
})

const address = await app.listen({ port: 0, host: '127.0.0.1' })
process.stdout.write(`listening ${address}\n`)
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => { app.close().then(() => process.exit(0), () => process.exit(1)) })
