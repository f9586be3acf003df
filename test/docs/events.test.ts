import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { createClient } from '../../src/client/index.js'
import { build, sqliteUrl, TOKEN } from '../helpers/build.js'
import { codeBlocks, readPage, ROOT } from '../helpers/markdown.js'

// docs/events.md's mirror, run against the service: list, then follow from the cursor taken before the list.
t.test('the mirror of docs/events.md keeps up with the store, and resumes from its cursor', async (t) => {
  const [block] = codeBlocks(readPage('docs/events.md')).filter((block) => block.lang === 'ts')
  const file = join(t.testdir(), 'mirror.ts')
  writeFileSync(file, block.code.replace("'plant-store/client'", JSON.stringify(join(ROOT, 'src/client/index.ts'))))
  const { keepMirror } = await import(file) as { keepMirror: (baseUrl: string, token: string, mirror: Map<bigint, object>, signal: AbortSignal, saved: (cursor: string) => void) => Promise<void> }

  const app = await build(t, { DATABASE_URL: sqliteUrl(t) })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  const client = createClient({ baseUrl, token: TOKEN })
  const big = 2n ** 63n - 1n
  await client.create({ id: 1n, name: 'before', tag: 'old' })
  await client.create({ id: big, name: 'exact' })

  const mirror = new Map<bigint, object>()
  const stop = new AbortController()
  let cursor = ''
  const running = keepMirror(baseUrl, TOKEN, mirror, stop.signal, (saved) => { cursor = saved }).catch((error: Error) => error)
  const store = async () => {
    const plants = new Map<bigint, object>()
    for await (const { id, name, tag } of client.list()) plants.set(id, tag === undefined ? { name } : { name, tag })
    return plants
  }
  const text = (map: Map<bigint, object>) => JSON.stringify([...map].sort(([a], [b]) => a < b ? -1 : 1), (_, v) => typeof v === 'bigint' ? String(v) : v)
  const caughtUp = async (what: string) => {
    for (const deadline = Date.now() + 20_000; text(mirror) !== text(await store()); await sleep(20)) {
      if (Date.now() > deadline) throw new Error(`${what}: the mirror did not catch up: ${text(mirror)}`)
    }
  }
  await caughtUp('the list')
  await client.update(1n, { name: 'after', tag: null })
  await client.create({ id: -5n, name: 'new' })
  await client.delete(big)
  await caughtUp('the changes')
  t.same([...mirror.keys()].sort(), [-5n, 1n])
  stop.abort()
  t.equal((await running as Error).name, 'AbortError', 'an abort ends it')

  // Resuming from the saved cursor: exactly the changes made since.
  await client.create({ id: 9n, name: 'while away' })
  const feed = client.events.follow({ after: cursor, signal: AbortSignal.timeout(20_000) })[Symbol.asyncIterator]()
  const { value: event } = await feed.next()
  t.same(event, { id: event?.id, type: 'plant.created', timestamp: event?.timestamp, data: { id: 9n, name: 'while away' } })
  await feed.return?.()
})
