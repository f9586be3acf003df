// src/: the composition root (app, server, index, observability); the layers are its folders. The package's
// main entry: the whole service as one Fastify app.
export { buildApp, type AppConfig, type AppOptions } from './app.js'
export { ConfigError, loadConfig, type Config } from './config/index.js'
export type { StoreConfig } from './store/index.js'
