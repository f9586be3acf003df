// The change feed's catch-up: a backlog of events read in pages of 1000 through the app
// (npm run bench:feed). Prints events per second.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config/index.js'

const EVENTS = Number(process.env.FEED_EVENTS ?? 100_000)
const TOKEN = 'bench-token-0123456789abcdefghijklmnop'

const dir = mkdtempSync(join(tmpdir(), 'plant-store-feed-'))
try {
  const app = await buildApp(loadConfig({ API_TOKENS: TOKEN, LOG_LEVEL: 'silent', DATABASE_URL: `sqlite:${join(dir, 'plants.db')}`, MAX_EVENT_LOOP_DELAY: '0' }))
  await app.ready()
  const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }
  for (let i = 0; i < EVENTS; i += 1000) {
    await Promise.all(Array.from({ length: Math.min(1000, EVENTS - i) }, (_, j) =>
      app.inject({ method: 'POST', url: '/plants', headers, payload: `{"id":${i + j},"name":"plant ${i + j}","tag":"bench"}` })))
  }
  const started = performance.now()
  let read = 0
  for (let next = '/events?limit=1000'; ;) {
    const res = await app.inject({ url: next, headers })
    const count = (res.body.match(/"type":/g) ?? []).length
    read += count
    if (count === 0) break
    next = /^<([^>]+)>/.exec(String(res.headers.link))?.[1] as string
  }
  const seconds = (performance.now() - started) / 1000
  console.log(`catch-up: ${read} events in ${seconds.toFixed(2)} s, ${Math.round(read / seconds)} events/s (SQLite, pages of 1000)`)
  await app.close()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
