// Webhook figures for npm run bench: a receiver in the bench process, one
// endpoint registered on a server, and what the sender then does.
import { once } from 'node:events'
import { createServer, type Server as HttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { create, load, TOKEN, type Server } from './load.js'

const auth = { authorization: `Bearer ${TOKEN}` }

export interface Receiver {
  url: string
  /** Deliveries received so far. */
  count: () => number
  /** Resolves with the time (performance.now()) the first delivery of plant `id` arrived. */
  arrival: (id: number) => Promise<number>
  close: () => Promise<void>
}

/** An HTTP receiver on 127.0.0.1 that answers every delivery 204 at once. */
export async function startReceiver (): Promise<Receiver> {
  let count = 0
  const arrived = new Map<number, number>()
  const waiting = new Map<number, (at: number) => void>()
  const server: HttpServer = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      count++
      const id = Number(/"id":(-?\d+)/.exec(Buffer.concat(chunks).toString())?.[1])
      if (!arrived.has(id)) {
        const at = performance.now()
        arrived.set(id, at)
        waiting.get(id)?.(at)
      }
      response.writeHead(204).end()
    })
  })
  server.keepAliveTimeout = 60_000
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/plants`,
    count: () => count,
    arrival: (id) => arrived.has(id) ? Promise.resolve(arrived.get(id) as number) : new Promise((resolve) => waiting.set(id, resolve)),
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()) })
  }
}

/** Subscribes `receiver` to the server's plant-added events. */
export async function subscribe (server: Server, receiver: Receiver): Promise<void> {
  const response = await fetch(`${server.url}/webhooks`, {
    method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ url: receiver.url })
  })
  if (response.status !== 201) throw new Error(`POST /webhooks: ${response.status} ${await response.text()}`)
}

/** The deliveries pending on the server, as its /metrics tell. */
async function backlog (server: Server): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`, { headers: auth })).text()
  return Number(/^plant_store_webhook_backlog (\d+)/m.exec(text)?.[1])
}

/** Resolves once the server has no delivery pending. */
export async function drained (server: Server): Promise<void> {
  while (await backlog(server) > 0) await sleep(50)
}

export interface SenderFigures {
  /** Pending when the create load stopped. */
  pending: number
  /** Those delivered per second, with no creates meanwhile. */
  drainPerSecond: number
  /** POST /plants sent → the receiver has the delivery, one create at a time, in ms. */
  latency: { p50: number, p99: number, samples: number }
}

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
}

/**
 * On a server subscribed to `receiver`: creates under load for `seconds` (the
 * sender falls behind), then the time the sender takes to deliver what is
 * pending; then single creates, 20 ms apart, each timed to its delivery.
 */
export async function measureSender (server: Server, receiver: Receiver, seconds: number, idBase: number): Promise<SenderFigures> {
  await load(server, create, seconds)
  const pending = await backlog(server)
  const start = performance.now()
  let left = pending
  while (left > 0) {
    await sleep(50)
    left = await backlog(server)
  }
  const drainPerSecond = pending / ((performance.now() - start) / 1000)

  const latencies: number[] = []
  for (let i = 0; i < 200; i++) {
    const id = idBase + i
    const sent = performance.now()
    const response = await fetch(`${server.url}/plants`, {
      method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ id, name: 'latency' })
    })
    await response.arrayBuffer()
    latencies.push(await receiver.arrival(id) - sent)
    await sleep(20)
  }
  return { pending, drainPerSecond, latency: { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), samples: latencies.length } }
}
