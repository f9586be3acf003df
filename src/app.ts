import Fastify, { type FastifyInstance } from 'fastify'
import auth from '../plugins/auth.js'
import health from '../plugins/health.js'
import plants from '../plugins/plants/index.js'
import type { Config } from './config.js'
import { sendError, sendNotFound } from './errors.js'
import { serverOptions } from './server-options.js'
import { openStore, type StoreConfig } from './store/index.js'

export type AppConfig = StoreConfig & Pick<Config, 'tokens' | 'bodyLimit' | 'logLevel'>

/** Builds the whole service from a config. It listens on nothing: see server.ts. */
export async function buildApp (config: AppConfig): Promise<FastifyInstance> {
  const store = await openStore(config)
  const app = Fastify(serverOptions(config))
  app.addHook('onClose', () => store.close())

  app.setErrorHandler(sendError)
  app.setNotFoundHandler(sendNotFound)

  // Public: probes for load balancers and orchestrators.
  app.register(health, { store })

  // The API: every route in this scope needs a bearer token.
  app.register(async function api (scope) {
    await scope.register(auth, { tokens: config.tokens })
    await scope.register(plants, { store })
  })

  return app
}
