import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config/index.js'
import { openStore } from '../../src/store/index.js'
import type { WebhookEventType } from '../../src/store/webhook-types.js'
import { makeSecret } from '../../src/webhooks/signing.js'
import { TOKEN } from './build.js'
import type { Receiver } from './receiver.js'
import { exited, type RunningServer } from './server.js'

const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }

/** Subscribes `url` (to `events`, when given) before any server opens the database (a SQLite server reads the endpoints as it opens). */
export async function subscribe (databaseUrl: string, url: string, events?: WebhookEventType[]): Promise<void> {
  const store = await openStore({ databaseUrl, sqliteSynchronous: 'normal', databasePoolSize: 1, databaseTimeout: 5000 })
  await store.webhooks.createEndpoint({ url, secret: makeSecret(), events })
  await store.close()
}

/** Polls `check` until it holds, or fails the test after `timeout` ms. */
export async function waitUntil (what: string, check: () => boolean | Promise<boolean>, timeout = 10_000): Promise<void> {
  const deadline = Date.now() + timeout
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await sleep(20)
  }
}

/** Plant ids the receiver has got, each with the webhook-ids that carried it, and what each webhook-id carried. */
export function tally (receiver: Receiver): { plants: Map<number, Set<string>>, bodies: Map<string, Set<string>> } {
  const plants = new Map<number, Set<string>>()
  const bodies = new Map<string, Set<string>>()
  for (const request of receiver.received) {
    const id = request.headers['webhook-id'] as string
    const body = request.body.toString()
    const plant = (JSON.parse(body) as { id: number }).id
    plants.set(plant, (plants.get(plant) ?? new Set()).add(id))
    bodies.set(id, (bodies.get(id) ?? new Set()).add(body))
  }
  return { plants, bodies }
}

/** Posts plants `from`..`to`, `clients` at a time, spread over the services at `urls`; the ids that got a 200. */
export async function postPlants (urls: string[], from: number, to: number, clients: number, stop?: AbortSignal): Promise<number[]> {
  const acknowledged: number[] = []
  let next = from
  await Promise.all(Array.from({ length: clients }, async () => {
    while (next <= to && stop?.aborted !== true) {
      const id = next++
      try {
        const response = await fetch(`${urls[id % urls.length]}/plants`, { method: 'POST', headers, body: JSON.stringify({ id, name: `plant ${id}` }) })
        if (response.status === 200) acknowledged.push(id)
      } catch {
        // The process died under this request: it was never acknowledged.
      }
    }
  }))
  return acknowledged
}

/** Stops a server process the way an orchestrator does, and waits for it to exit (within EXIT_MS). */
export async function stopServer (server: RunningServer): Promise<void> {
  server.child.kill('SIGTERM')
  await exited(server)
}

/** The service built in this process as the server builds it (a restart, or a second instance), closed when the test ends. */
export async function startInProcess (t: Test, env: Record<string, string>, logLines?: string[]): Promise<FastifyInstance> {
  const logStream = logLines === undefined ? undefined : { write: (line: string) => { logLines.push(line) } }
  const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', ...env }), { logStream })
  t.teardown(() => app.close())
  await app.ready()
  return app
}
