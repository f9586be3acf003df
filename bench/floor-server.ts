// The floor as a server: see floor.ts.
import { floorApp } from './floor.js'

const app = await floorApp(Number(process.env.BENCH_PLANTS ?? 0), (process.env.API_TOKENS ?? '').split(','))
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' })
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => { app.close().then(() => process.exit(0)) })
