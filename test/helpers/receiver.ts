import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'

export interface Received {
  method: string
  url: string
  headers: IncomingHttpHeaders
  /** The body exactly as it arrived. */
  body: Buffer
  at: number
}

export type Answer = (request: Received, response: ServerResponse) => void | Promise<void>

export interface Receiver {
  /** http://127.0.0.1:<port> */
  origin: string
  port: number
  received: Received[]
  /** TCP connections accepted so far, whether or not a request followed. */
  connections: () => number
  /** How the next requests are answered (204 by default). */
  answer: (handler: Answer) => void
  /** Resolves once `count` requests have arrived. */
  waitFor: (count: number, timeout?: number) => Promise<Received[]>
}

/** A real HTTP server on 127.0.0.1 that records every request: a webhook receiver. */
export async function startReceiver (t: Test, handler: Answer = (_, response) => { response.writeHead(204).end() }): Promise<Receiver> {
  const received: Received[] = []
  const waiters: Array<() => void> = []
  let answer = handler
  let connections = 0
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const entry = { method: request.method as string, url: request.url as string, headers: request.headers, body: Buffer.concat(chunks), at: Date.now() }
      received.push(entry)
      for (const wake of waiters.splice(0)) wake()
      Promise.resolve(answer(entry, response)).catch(() => response.destroy())
    })
  })
  server.on('connection', () => { connections++ })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(async () => {
    server.closeAllConnections()
    server.close()
  })
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    received,
    connections: () => connections,
    answer: (next) => { answer = next },
    waitFor: async (count, timeout = 10_000) => {
      const deadline = Date.now() + timeout
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`the receiver got ${received.length} requests of ${count} in ${timeout} ms`)
        await new Promise<void>((resolve) => { waiters.push(resolve); setTimeout(resolve, 50).unref() })
      }
      return received.slice(0, count)
    }
  }
}

/** A port on 127.0.0.1 where nothing listens: connections to it are refused. */
export async function closedPort (): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  server.close()
  await once(server, 'close')
  return port
}
