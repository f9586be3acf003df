import t from 'tap'
import { pollUntil } from './helpers/bounded.js'
import { TOKEN } from './helpers/build.js'
import { exited, startServer } from './helpers/server.js'
import { forEachStore } from './helpers/stores.js'

const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }

forEachStore(t, (t, _build, databaseUrl) => {
  t.test('every acknowledged plant survives a SIGKILL in the middle of the load', async (t) => {
    const env = { API_TOKENS: TOKEN, DATABASE_URL: await databaseUrl(t) }
    const first = await startServer(t, env)
    const acknowledged: number[] = []
    let next = 1
    const stop = new AbortController()
    // The clients stop with the test, whatever ends it.
    t.teardown(() => { stop.abort() })

    // 32 clients posting unique ids back to back until the process dies under them.
    const clients = Array.from({ length: 32 }, async () => {
      while (!stop.signal.aborted) {
        const id = next++
        try {
          const res = await fetch(`${first.url}/plants`, { method: 'POST', headers, body: JSON.stringify({ id, name: `plant ${id}` }) })
          if (res.status === 200) acknowledged.push(id)
        } catch {
          // The connection died with the process: this one was never acknowledged.
        }
      }
    })
    await pollUntil(() => acknowledged.length >= 300, 60_000, () => `300 plants acknowledged (${acknowledged.length} were)`, 5)
    first.child.kill('SIGKILL')
    stop.abort()
    await exited(first)
    await Promise.all(clients)
    t.ok(acknowledged.length >= 300, `${acknowledged.length} plants acknowledged before the kill`)

    const second = await startServer(t, env)
    const missing: number[] = []
    for (const id of acknowledged) {
      const res = await fetch(`${second.url}/plants/${id}`, { headers })
      if (res.status !== 200 || (await res.json() as { name: string }).name !== `plant ${id}`) missing.push(id)
    }
    t.same(missing, [], 'nothing acknowledged was lost')
    second.child.kill('SIGTERM')
    await exited(second)
  })
})
