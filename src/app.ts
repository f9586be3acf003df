import Fastify, { type FastifyInstance } from 'fastify'
import auth from '../plugins/auth.js'
import authFailures from '../plugins/auth-failures.js'
import cors from '../plugins/cors.js'
import docs from '../plugins/docs.js'
import events from '../plugins/events/index.js'
import health from '../plugins/health.js'
import loadShedding from '../plugins/load-shedding.js'
import requestMetrics, { metricsRoute } from '../plugins/metrics.js'
import plants from '../plugins/plants/index.js'
import rateLimit from '../plugins/rate-limit.js'
import webhookSender from '../plugins/webhook-sender.js'
import webhooks from '../plugins/webhooks/index.js'
import { sharedSchemas } from '../schemas/index.js'
import type { Config } from './config/index.js'
import { describeApiRoute } from './http/api-routes.js'
import { guardConnections } from './http/connections.js'
import { sendError, sendNotFound } from './http/errors.js'
import { answerProtocol } from './http/protocol.js'
import { echoRequestId } from './http/request-id.js'
import { observe } from './observability.js'
import { serverOptions, type LogStream, type ServerConfig } from './http/server-options.js'
import { combineObservers, openStore, type PlantStore, type StoreConfig } from './store/index.js'
import { plantWrites } from './webhooks/plant-writes.js'

export type AppConfig = StoreConfig & ServerConfig &
  Pick<Config, 'tokens' | 'corsOrigins' | 'rateLimitMax' | 'rateLimitWindow' | 'maxEventLoopDelay' | 'authFailureLimit' | 'authFailureWindow' | 'maxConnections' | 'maxConnectionsPerAddress'> &
  Pick<Config, 'metrics' | 'redisUrl' | 'redisKeyPrefix' | 'tracing'> &
  Pick<Config, 'webhookAllowPrivate' | 'webhookRetrySchedule' | 'webhookTimeout' | 'webhookRetention' | 'webhookDisableAfter' | 'webhookEndpointLimit'> &
  Pick<Config, 'eventsRetention'>

export interface AppOptions {
  /** Where the JSON log lines go (a test captures them); standard output when absent. */
  logStream?: LogStream
  /** A store to use instead of the one DATABASE_URL names (the bench's baseline); the app closes it. */
  store?: PlantStore
}

/** Builds the whole service from a config. It listens on nothing: see server.ts. */
export async function buildApp (config: AppConfig, options: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify(serverOptions(config, options.logStream))
  guardConnections(app, config)
  // Metrics, traces and the limits shared through Redis, as configured.
  const seen = await observe(app, config)
  // The webhook sender keeps to its share while plant writes are being made.
  const writes = plantWrites()
  const store = options.store ?? await openStore(config, app.log, combineObservers(seen.store, writes.observer))
  app.addHook('onClose', async () => {
    await store.close()
    app.log.info('store closed')
    await seen.close()
  })

  app.setErrorHandler(sendError)
  app.setNotFoundHandler(sendNotFound)
  app.addHook('onRequest', echoRequestId)
  // Browsers (off unless CORS_ORIGINS is set).
  await app.register(cors, { origins: config.corsOrigins })
  answerProtocol(app)
  await app.register(requestMetrics, { metrics: seen.metrics })

  // At the root, so that the OpenAPI document names them as its components.
  for (const schema of sharedSchemas) app.addSchema(schema)

  // Public: the API's description (before every route, so it sees them all) and probes.
  await app.register(docs)
  app.register(health, { store })

  // In the background, from ready to close (before the store closes): the outbox's deliveries.
  app.register(webhookSender, {
    store: store.webhooks,
    allowPrivate: config.webhookAllowPrivate,
    timeout: config.webhookTimeout,
    schedule: config.webhookRetrySchedule,
    retention: config.webhookRetention,
    disableAfter: config.webhookDisableAfter,
    writing: writes.writing,
    observer: seen.webhooks
  })
  seen.metrics?.watchBacklog(store.webhooks)

  // The API: every route in this scope needs a bearer token with the scope the route declares.
  app.register(async function api (scope) {
    scope.addHook('onRoute', describeApiRoute)
    await scope.register(loadShedding, { maxEventLoopDelay: config.maxEventLoopDelay, onRefuse: seen.refused('load_shedding') })
    await scope.register(authFailures, { max: config.authFailureLimit, timeWindow: config.authFailureWindow, onRefuse: seen.refused('auth_failures'), shared: seen.limits?.counts('auth-failures:') })
    await scope.register(auth, { tokens: config.tokens })
    await scope.register(rateLimit, { max: config.rateLimitMax, timeWindow: config.rateLimitWindow, onRefuse: seen.refused('rate_limit'), shared: seen.limits?.counts('rate-limit:') })
    await scope.register(plants, { store })
    await scope.register(webhooks, { store: store.webhooks, allowPrivate: config.webhookAllowPrivate, endpointLimit: config.webhookEndpointLimit })
    await scope.register(metricsRoute, { metrics: seen.metrics })
    // The change feed (off when EVENTS_RETENTION is 0: the store then has none, and /events is a 404).
    if (store.events !== undefined) await scope.register(events, { feed: store.events, cursorKey: store.cursorKey, retention: config.eventsRetention, maxWaiting: config.maxConnections })
  })

  return app
}
