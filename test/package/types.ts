// Compiled, never run: the published types are real types, not `any`. The
// compilation fails if a line marked as an expected error type-checks.
import Fastify from 'fastify'
import { buildApp, loadConfig, type AppConfig, type Config } from 'plant-store'
import auth, { type AuthOptions } from 'plant-store/auth'
import plants, { type PlantsOptions } from 'plant-store/plants'
import { ErrorBody, NewPlant, Plant, sharedSchemas } from 'plant-store/schemas'
import { openSqliteStore, openStore, StoreUnavailableError, type CreateResult, type PlantStore } from 'plant-store/store'
import { openPostgresStore, type PostgresStoreOptions } from 'plant-store/store/postgres'

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
  app.get('/who', async (request) => {
    // The auth plugin's request decorator comes with its types.
    const digest: string | undefined = request.tokenDigest
    return { digest }
  })

  const created: CreateResult = await store.create({ id: 9007199254740993n, name: 'Fern' })
  const plant: Plant = created.plant
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
  const authOptions: AuthOptions = { tokens: config.tokens }
  return [service, options, authOptions, error, ids, open, postgres, viaUrl, new StoreUnavailableError('down') instanceof Error]
}
