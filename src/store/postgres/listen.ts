import pg from 'pg'
import type { FastifyBaseLogger } from 'fastify'

/** The channel a commit that added deliveries notifies, in every instance on the database. */
export const CHANNEL = 'plant_store_webhooks'

export interface ListenOptions {
  url: string
  timeout: number
  log: Pick<FastifyBaseLogger, 'info' | 'warn'>
  /** A notification arrived; `payload` names the instance that sent it. */
  notified: (payload: string) => void
  /** The connection is back after a loss: notifications sent meanwhile were missed. */
  reconnected: () => void
}

// Reconnection waits 100 ms, then twice as long each time, up to 5 s.
const FIRST_DELAY = 100
const MAX_DELAY = 5000

/** A connection of its own (a pooled one would lose its LISTEN when returned) that listens on CHANNEL. */
export function listen (options: ListenOptions): { stop: () => Promise<void> } {
  const { url, timeout, log, notified, reconnected } = options
  let client: pg.Client | undefined
  let connecting: Promise<void>
  let timer: NodeJS.Timeout | undefined
  let failures = 0
  let stopped = false

  function retry (): void {
    if (stopped) return
    if (failures++ === 0) log.warn({}, 'PostgreSQL notifications are unavailable: webhook deliveries wait for the next poll until they are back')
    timer = setTimeout(() => { connecting = connect() }, Math.min(FIRST_DELAY * 2 ** (failures - 1), MAX_DELAY))
  }

  async function connect (): Promise<void> {
    const candidate = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeout, keepAlive: true, application_name: 'plant-store-listen' })
    candidate.on('notification', (message) => notified(String(message.payload)))
    // An error on an open connection is followed by 'end'; the reconnection starts there.
    candidate.on('error', () => {})
    candidate.on('end', () => {
      if (client !== candidate) return
      client = undefined
      retry()
    })
    try {
      await candidate.connect()
      await candidate.query(`LISTEN ${CHANNEL}`)
    } catch {
      candidate.end().catch(() => {})
      retry()
      return
    }
    if (stopped) {
      await candidate.end()
      return
    }
    client = candidate
    if (failures > 0) {
      failures = 0
      log.info({}, 'PostgreSQL notifications are back')
      reconnected()
    }
  }

  connecting = connect()
  return {
    async stop () {
      stopped = true
      clearTimeout(timer)
      // An attempt under way ends by itself, seeing `stopped`.
      await connecting
      const last = client
      client = undefined
      await last?.end()
    }
  }
}
