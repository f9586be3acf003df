// The webhook drain: how fast Plant Store delivers a backlog of plant.added events
// to a receiver on loopback that answers 204 at once, with no creates meanwhile.
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { AUTH, CREATE, serverCpu, startServer, stopServer, warmUp, type Server } from './load.js'

export interface Receiver { url: string, close: () => Promise<void> }

export async function startReceiver (): Promise<Receiver> {
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', () => response.writeHead(204).end())
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()) })
  }
}

/** Deliveries pending, from the server's own metrics. */
async function backlog (server: Server): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`, { headers: AUTH })).text()
  return Number(/^plant_store_webhook_backlog (\d+)/m.exec(text)?.[1])
}

export interface Drain {
  /** Deliveries per second while the backlog drains. */
  rate: number
  /** The server's CPU over the drain, per delivery. */
  cpuUs: number
}

/**
 * Plant Store (`script`) on a new database: one endpoint subscribed, the warm-up's
 * creates (the sender falls behind them), then the time until nothing is pending.
 */
export async function measureDrain (script: string, databaseUrl: string, receiver: Receiver): Promise<Drain> {
  const server = await startServer(script, { DATABASE_URL: databaseUrl, WEBHOOK_ALLOW_PRIVATE: 'true' })
  try {
    const subscribed = await fetch(`${server.url}/webhooks`, {
      method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify({ url: receiver.url })
    })
    if (subscribed.status !== 201) throw new Error(`POST /webhooks: ${subscribed.status} ${await subscribed.text()}`)
    await warmUp(server, CREATE)
    const [pending, cpu, started] = [await backlog(server), serverCpu(server), performance.now()]
    while (await backlog(server) > 0) await sleep(20)
    // None pending: the sender kept up with the creates, and there was no backlog to time.
    if (pending === 0) return { rate: NaN, cpuUs: NaN }
    return { rate: pending / ((performance.now() - started) / 1000), cpuUs: (serverCpu(server) - cpu) / pending }
  } finally {
    await stopServer(server)
  }
}
