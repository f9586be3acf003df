import Fastify, { type FastifyInstance } from 'fastify'
import auth from '../plugins/auth.js'
import authFailures from '../plugins/auth-failures.js'
import docs from '../plugins/docs.js'
import health from '../plugins/health.js'
import loadShedding from '../plugins/load-shedding.js'
import plants from '../plugins/plants/index.js'
import rateLimit from '../plugins/rate-limit.js'
import { sharedSchemas } from '../schemas/index.js'
import type { Config } from './config.js'
import { describeApiRoute } from './api-routes.js'
import { guardConnections } from './connections.js'
import { sendError, sendNotFound } from './errors.js'
import { answerProtocol } from './protocol.js'
import { echoRequestId } from './request-id.js'
import { serverOptions, type LogStream, type ServerConfig } from './server-options.js'
import { openStore, type PlantStore, type StoreConfig } from './store/index.js'

export type AppConfig = StoreConfig & ServerConfig &
  Pick<Config, 'tokens' | 'rateLimitMax' | 'rateLimitWindow' | 'maxEventLoopDelay' | 'authFailureLimit' | 'authFailureWindow' | 'maxConnections'>

export interface AppOptions {
  /** Where the JSON log lines go (a test captures them); standard output when absent. */
  logStream?: LogStream
  /** A store to use instead of the one DATABASE_URL names (the bench's baseline); the app closes it. */
  store?: PlantStore
}

/** Builds the whole service from a config. It listens on nothing: see server.ts. */
export async function buildApp (config: AppConfig, options: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify(serverOptions(config, options.logStream))
  guardConnections(app, config.maxConnections)
  const store = options.store ?? await openStore(config, app.log)
  app.addHook('onClose', async () => {
    await store.close()
    app.log.info('store closed')
  })

  app.setErrorHandler(sendError)
  app.setNotFoundHandler(sendNotFound)
  app.addHook('onRequest', echoRequestId)
  answerProtocol(app)

  // At the root, so that the OpenAPI document names them as its components.
  for (const schema of sharedSchemas) app.addSchema(schema)

  // Public: the API's description (before every route, so it sees them all) and probes.
  await app.register(docs)
  app.register(health, { store })

  // The API: every route in this scope needs a bearer token. Overload is shed
  // first, before any work; an address that failed authentication too often is
  // refused before its token is looked at; the rate limit counts per token, so after auth.
  app.register(async function api (scope) {
    scope.addHook('onRoute', describeApiRoute)
    await scope.register(loadShedding, { maxEventLoopDelay: config.maxEventLoopDelay })
    await scope.register(authFailures, { max: config.authFailureLimit, timeWindow: config.authFailureWindow })
    await scope.register(auth, { tokens: config.tokens })
    await scope.register(rateLimit, { max: config.rateLimitMax, timeWindow: config.rateLimitWindow })
    await scope.register(plants, { store })
  })

  return app
}
