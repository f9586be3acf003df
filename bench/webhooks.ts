// The webhook drain: how fast Plant Store delivers a backlog of plant.created events
// to a receiver on loopback that answers 204 at once, with no creates meanwhile.
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { AUTH, CREATE, serverCpu, startServer, stopServer, warmUp } from './load.js'

export interface Receiver { url: string, received: () => number, close: () => Promise<void> }

export async function startReceiver (): Promise<Receiver> {
  let received = 0
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      received++
      response.writeHead(204).end()
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received: () => received,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()) })
  }
}

// The longest a drain may take before the run gives up on it.
const DRAIN_LIMIT = 600_000

export interface Drain {
  /** Deliveries per second while the backlog drains. */
  rate: number
  /** The server's CPU over the drain, per delivery. */
  cpuUs: number
}

/**
 * Plant Store (`command`, as serviceCommand gives it) on a new database: one endpoint subscribed, the warm-up's
 * creates (the sender falls behind them), then the time until the receiver has had a delivery for each: their
 * events expanded into deliveries and sent.
 */
export async function measureDrain (command: string[], databaseUrl: string, receiver: Receiver): Promise<Drain> {
  const server = await startServer(command, { DATABASE_URL: databaseUrl, WEBHOOK_ALLOW_PRIVATE: 'true' })
  try {
    const subscribed = await fetch(`${server.url}/webhooks`, {
      method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify({ url: receiver.url })
    })
    if (subscribed.status !== 201) throw new Error(`POST /webhooks: ${subscribed.status} ${await subscribed.text()}`)
    const before = receiver.received()
    const created = await warmUp(server, CREATE)
    const [sent, cpu, started] = [receiver.received() - before, serverCpu(server), performance.now()]
    for (const end = started + DRAIN_LIMIT; receiver.received() - before < created; await sleep(20)) {
      if (performance.now() > end) throw new Error(`the drain: ${receiver.received() - before} of ${created} deliveries after ${DRAIN_LIMIT / 1000} s`)
    }
    const backlog = created - sent
    // None left: the sender kept up with the creates, and there was no backlog to time.
    if (backlog === 0) return { rate: NaN, cpuUs: NaN }
    return { rate: backlog / ((performance.now() - started) / 1000), cpuUs: (serverCpu(server) - cpu) / backlog }
  } finally {
    await stopServer(server)
  }
}
