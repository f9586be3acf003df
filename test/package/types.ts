// Compiled, never run: the published types are real types, not `any`. The
// compilation fails if a line marked as an expected error type-checks.
import Fastify from 'fastify'
import { buildApp, loadConfig, type AppConfig, type Config } from 'plant-store'
import auth, { type AuthOptions } from 'plant-store/auth'
import plants, { plantEtag, type PlantsOptions, type PlantsStore } from 'plant-store/plants'
import { ErrorBody, NewPlant, Plant, sharedSchemas } from 'plant-store/schemas'
import { openSqliteStore, openStore, StoreUnavailableError, type CreateResult, type PlantStore } from 'plant-store/store'
import { openPostgresStore, type PostgresStoreOptions } from 'plant-store/store/postgres'
import { createClient, PlantStoreError, type PlantListItem, type PlantStoreClient, type TaggedPlant, type WebhookDelivery } from 'plant-store/client'
import { verifyWebhook, WebhookVerificationError } from 'plant-store/client/webhooks'

export async function typeChecks (): Promise<unknown[]> {
  const store: PlantStore = openSqliteStore({ path: ':memory:' })
  const app = Fastify()

  app.register(plants, { store, prefix: '/v1', bodyLimit: 1024 })
  // @ts-expect-error the plugin needs a store
  app.register(plants, { prefix: '/v1' })
  // @ts-expect-error bodyLimit is a number of bytes
  app.register(plants, { store, bodyLimit: '1kb' })
  app.register(auth, { tokens: ['t'], realm: 'host' })
  // @ts-expect-error tokens is a list
  app.register(auth, { tokens: 't' })
  app.register(auth, { tokens: ['t', { token: 'reader', scopes: ['plants:read'] }] })
  // @ts-expect-error a scope is one of the four
  app.register(auth, { tokens: [{ token: 'reader', scopes: ['plants:admin'] }] })
  app.get('/report', { config: { scope: 'metrics' } }, async () => 'a route of the host that declares its scope')
  // @ts-expect-error a route's scope is one of the four
  app.get('/admin', { config: { scope: 'admin' } }, async () => 'no such scope')
  app.get('/who', async (request) => {
    // The auth plugin's request decorator comes with its types.
    const digest: string | undefined = request.tokenDigest
    const fingerprint: string | undefined = request.tokenFingerprint
    const mayWrite: boolean | undefined = request.tokenScopes?.has('plants:write')
    return { digest, fingerprint, mayWrite }
  })

  const created: CreateResult = await store.create({ id: 9007199254740993n, name: 'Fern' })
  const plant: Plant = created.plant
  const changed: Plant | undefined = (await store.update(9007199254740993n, { tag: null }, { ifMatch: ['tag'] }))?.plant
  // @ts-expect-error a name cannot be removed
  await store.update(1n, { name: null })
  // @ts-expect-error ids are bigint
  await store.get(1)
  const body: NewPlant = { id: 1n, name: plant.name }
  const error: ErrorBody = { error: 404, message: `no plant ${body.id}` }
  const ids: Array<string | undefined> = sharedSchemas.map((schema) => schema.$id)

  // @ts-expect-error openSqliteStore needs a path
  openSqliteStore({})
  const postgres: PostgresStoreOptions = { url: 'postgres://localhost/plants', poolSize: 2, timeout: 1000 }
  const open: (options: PostgresStoreOptions) => Promise<PlantStore> = openPostgresStore
  const viaUrl: PlantStore = await openStore({ databaseUrl: 'sqlite::memory:', sqliteSynchronous: 'normal', databasePoolSize: 1, databaseTimeout: 100 })

  const config: Config = loadConfig({ API_TOKENS: 't' })
  const appConfig: AppConfig = config
  const service = await buildApp(appConfig)
  const options: PlantsOptions = { store }
  // A PlantStore is a PlantsStore; an adapter needs only the members the routes call.
  const port: PlantsStore = store
  const { create, update, get, list, cursorKey } = store
  // @ts-expect-error the routes delete plants too
  const partial: PlantsStore = { create, update, get, list, cursorKey }
  const etag: string = plantEtag({ name: 'Fern' })
  const authOptions: AuthOptions = { tokens: config.tokens }
  return [service, options, port, partial, etag, authOptions, error, ids, open, postgres, viaUrl, changed, new StoreUnavailableError('down') instanceof Error]
}

export async function clientTypeChecks (): Promise<unknown[]> {
  const client: PlantStoreClient = createClient({ baseUrl: 'http://127.0.0.1:3000', token: 't', retries: { max: 1, maxRetryAfter: 5000 } })
  // @ts-expect-error the token is required
  createClient({ baseUrl: 'http://127.0.0.1:3000' })
  // @ts-expect-error retries is a number or a policy
  createClient({ baseUrl: 'http://127.0.0.1:3000', token: 't', retries: 'often' })
  const plant: Plant = await client.create({ id: '9007199254740993', name: 'Fern' })
  const read: TaggedPlant = await client.get(9007199254740993n)
  const etag: string | undefined = read.etag
  const changed: TaggedPlant = await client.update(9007199254740993n, { name: 'Palm', tag: null }, { ifMatch: etag })
  await client.update(1, {}, { ifMatch: ['"a"', '"b"'] })
  // @ts-expect-error an id never changes
  await client.update(1, { id: 2n })
  // @ts-expect-error a plant always has a name
  await client.update(1, { name: null })
  await client.delete(1, { ifMatch: changed.etag })
  await client.delete(7, { signal: AbortSignal.timeout(1000) })
  // @ts-expect-error an id is a bigint, a number or a string
  await client.get({ id: 1 })
  // @ts-expect-error a plant needs a name
  await client.create({ id: 1n })
  const page = await client.listPage({ limit: 5, tag: 'climber' })
  const exact: bigint = page.items[0].id
  // @ts-expect-error a listed id is a bigint, never a number
  const rounded: number = page.items[0].id
  const cursor: string | undefined = page.nextCursor
  const all: PlantListItem[] = []
  for await (const item of client.list({ limit: 100 })) all.push(item)
  const deliveries: WebhookDelivery[] = (await client.webhooks.deliveriesPage('w1')).items
  const plantId: bigint = deliveries[0].plantId
  const { secret } = await client.webhooks.create({ url: 'https://example.com/hook' })

  let status: number | undefined
  try {
    await client.get(1n)
  } catch (error) {
    if (!(error instanceof PlantStoreError)) throw error
    switch (error.kind) {
      case 'not-found': {
        const notFound: 404 = error.status
        // @ts-expect-error a 404 carries no Retry-After
        const wait: number = error.retryAfter
        status = notFound + wait
        break
      }
      case 'rate-limited': {
        const limited: 429 = error.status
        const wait: number | undefined = error.retryAfter
        status = limited + (wait ?? 0)
        break
      }
      case 'precondition-failed': {
        const stale: 412 = error.status
        status = stale
        break
      }
      case 'network': {
        const none: undefined = error.status
        status = none
        break
      }
      default:
        status = error.status
    }
  }
  const verified: NewPlant = verifyWebhook(secret, new Headers(), '{"id":1,"name":"x"}')
  const event = verifyWebhook(secret, new Headers(), '{}', { events: true })
  // The type narrows the data: a plant after plant.created or plant.updated, its id alone after plant.deleted.
  const told: string = event.type === 'plant.deleted' ? String(event.data.id) : event.data.name
  return [plant, changed, exact, rounded, cursor, all, plantId, status, verified, told, new WebhookVerificationError('no') instanceof Error]
}
