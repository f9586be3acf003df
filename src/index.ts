// src/: the composition root (app, server, index, observability); the layers are its folders.
// The package's main entry: the whole service as one Fastify app. The plugins,
// the schemas and the stores have entries of their own (package.json `exports`).
export { buildApp, type AppConfig, type AppOptions } from './app.js'
export { ConfigError, loadConfig, type Config } from './config/index.js'
export type { StoreConfig } from './store/index.js'
