'use strict'
// A CommonJS app: require() loads the ESM entries (Node >= 20.19). Requiring every entry also
// shows that none uses top-level await, which require() refuses (ERR_REQUIRE_ASYNC_MODULE).
const assert = require('node:assert')
const { sep } = require('node:path')

/** Whether a CommonJS package (pg, better-sqlite3) is loaded, by the ESM side or this file. */
const loaded = (name) => Object.keys(require.cache).some((file) => file.includes(`${sep}node_modules${sep}${name}${sep}`))

async function main () {
  const { default: plants } = require('plant-store/plants')
  const { default: auth } = require('plant-store/auth')
  const { sharedSchemas } = require('plant-store/schemas')
  const { openSqliteStore } = require('plant-store/store')
  const { buildApp, loadConfig } = require('plant-store')
  assert.equal(typeof plants, 'function')
  assert.equal(typeof auth, 'function')
  assert.deepEqual(sharedSchemas.map((schema) => schema.$id), ['Plant', 'NewPlant', 'PlantPatch', 'PlantListItem', 'Error',
    'WebhookEndpoint', 'NewWebhookEndpoint', 'WebhookEndpointPatch', 'CreatedWebhookEndpoint', 'WebhookSecret', 'WebhookDelivery',
    'PlantCreatedEvent', 'PlantUpdatedEvent', 'PlantDeletedEvent', 'PlantCreatedFeedEvent', 'PlantUpdatedFeedEvent', 'PlantDeletedFeedEvent'])
  assert.ok(loaded('better-sqlite3'), 'the SQLite side is loaded')
  assert.ok(!loaded('pg'), 'nothing so far loads pg')

  const fastify = require('fastify')
  const store = openSqliteStore({ path: ':memory:' })
  const app = fastify()
  app.register(plants, { store, prefix: '/v1' })
  const created = await app.inject({ method: 'POST', url: '/v1/plants', payload: { id: 1, name: 'Fern' } })
  assert.deepEqual([created.statusCode, created.json()], [200, { name: 'Fern' }])
  await app.close()
  await store.close()

  const service = await buildApp(loadConfig({ API_TOKENS: 't', LOG_LEVEL: 'silent', DATABASE_URL: 'sqlite::memory:' }))
  assert.equal((await service.inject('/health')).statusCode, 200)
  await service.close()

  const { createClient, PlantStoreError } = require('plant-store/client')
  const { verifyWebhook } = require('plant-store/client/webhooks')
  assert.equal(typeof createClient({ baseUrl: 'http://127.0.0.1:1', token: 't' }).list, 'function')
  assert.equal(typeof PlantStoreError, 'function')
  assert.equal(typeof verifyWebhook, 'function')

  const { openPostgresStore } = require('plant-store/store/postgres')
  assert.equal(typeof openPostgresStore, 'function')
  assert.ok(loaded('pg'), 'plant-store/store/postgres loads pg')
  process.stdout.write('commonjs ok\n')
}

main().catch((error) => {
  process.stderr.write(`${error.stack}\n`)
  process.exit(1)
})
