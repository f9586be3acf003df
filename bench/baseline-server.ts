// The baseline: the same app (config, schemas, auth, parser, serializer) with a
// store that keeps nothing, so the bench can tell the store's cost from the rest.
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { applyChange, type PlantStore } from '../src/store/types.js'

// Reads answer made-up plants, so the read scenarios have a 200 to compare with.
const nothing: PlantStore = {
  async create ({ name, tag }) { return { outcome: 'created', plant: tag === undefined ? { name } : { name, tag } } },
  async update (id, change) { return { outcome: 'updated', plant: applyChange({ name: `plant ${id}`, tag: 'bench' }, change) } },
  async delete () { return true },
  async get (id) { return { name: `plant ${id}`, tag: 'bench' } },
  async list ({ limit, after = 0n }) {
    return Array.from({ length: limit }, (_, i) => ({ id: after + BigInt(i) + 1n, name: `plant ${after + BigInt(i) + 1n}`, tag: 'bench' }))
  },
  async check () {},
  async close () {},
  // No subscriptions: the baseline writes no outbox and sends nothing.
  webhooks: {
    async createEndpoint ({ url, description }) { return { id: 'ep_baseline', url, description, enabled: true, createdAt: new Date() } },
    async listEndpoints () { return [] },
    async getEndpoint () { return undefined },
    async updateEndpoint () { return undefined },
    async deleteEndpoint () { return false },
    async rotateSecret () { return false },
    async listDeliveries () { return undefined },
    async retryDelivery () { return false },
    async claim () { return [] },
    async finish () {},
    async release () {},
    async prune () { return 0 },
    async backlog () { return { pending: 0 } },
    onDeliveries () { return () => {} }
  }
}

const config = loadConfig(process.env)
const app = await buildApp(config, { store: nothing })
await app.listen({ port: config.port, host: config.host })
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => { app.close().then(() => process.exit(0)) })
