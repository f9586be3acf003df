// A reference app as a server: BENCH_APP=fastify or express, on DATABASE_URL
// (or a Map of BENCH_PLANTS plants), listening on HOST:PORT.
import { expressApp } from './express.js'
import { fastifyApp } from './fastify.js'
import { plantsOf } from './plants.js'

const plants = await plantsOf(process.env)
const tokens = (process.env.API_TOKENS ?? '').split(',')
const [port, host] = [Number(process.env.PORT), process.env.HOST ?? '127.0.0.1']

if (process.env.BENCH_APP === 'express') {
  const server = expressApp(plants, tokens).listen(port, host)
  process.once('SIGTERM', () => { server.close(() => process.exit(0)); server.closeAllConnections() })
} else {
  const app = await fastifyApp(plants, tokens)
  await app.listen({ port, host })
  process.once('SIGTERM', () => { app.close().then(() => process.exit(0)) })
}
