// The baseline: the same app (config, schemas, auth, parser, serializer) with a
// store that keeps nothing, so the bench can tell the store's cost from the rest.
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import type { PlantStore } from '../src/store/types.js'

const nothing: PlantStore = {
  async create ({ name, tag }) { return { outcome: 'created', plant: tag === undefined ? { name } : { name, tag } } },
  async get () { return undefined },
  async check () {},
  async close () {}
}

const config = loadConfig(process.env)
const app = await buildApp(config, { store: nothing })
await app.listen({ port: config.port, host: config.host })
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => { app.close().then(() => process.exit(0)) })
