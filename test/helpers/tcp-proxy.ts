import { once } from 'node:events'
import net, { createConnection, createServer, type AddressInfo, type Socket } from 'node:net'
import type { Test } from 'tap'

/**
 * A TCP proxy in front of a real server that can lose answers: while `drops`
 * is above zero, the next answer to arrive from the server is not passed on, and
 * the client's connection is cut instead. The request did reach the server and
 * was done; only its answer is lost, as when a connection breaks on the way back.
 */
export class AnswerDropper {
  private readonly server = net.createServer((client) => this.accept(client))
  private readonly sockets = new Set<net.Socket>()
  drops = 0
  url = ''

  constructor (private readonly target: URL) {}

  async listen (t: Test): Promise<void> {
    this.server.listen(0, '127.0.0.1')
    await once(this.server, 'listening')
    this.url = `http://127.0.0.1:${(this.server.address() as net.AddressInfo).port}`
    t.teardown(() => this.close())
  }

  private track (socket: net.Socket): void {
    this.sockets.add(socket)
    socket.on('close', () => this.sockets.delete(socket))
    socket.on('error', () => {})
  }

  private accept (client: net.Socket): void {
    this.track(client)
    const upstream = net.connect(Number(this.target.port), this.target.hostname)
    this.track(upstream)
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
    client.pipe(upstream)
    upstream.on('data', (chunk) => {
      if (this.drops > 0) {
        this.drops--
        client.destroy()
        upstream.destroy()
      } else {
        client.write(chunk)
      }
    })
  }

  async close (): Promise<void> {
    const closed = new Promise((resolve) => this.server.close(resolve))
    for (const socket of this.sockets) socket.destroy()
    await closed
  }
}

export interface ProxyControls {
  port: number
  /** Closes the listener and every connection: the target looks down. */
  stop (): Promise<void>
  /** Listens again on the same port. */
  start (): Promise<void>
  /** Keeps connections open but passes nothing on: the target looks hung. */
  stall (): void
  /** Passes data on again after stall(). */
  resume (): void
}

/**
 * A TCP proxy on 127.0.0.1 in front of `target`, which a test can stop, start
 * or stall to play an outage of the target without touching the target itself.
 */
export async function tcpProxy (t: Test, target: { host: string, port: number }): Promise<ProxyControls> {
  const sockets = new Set<Socket>()
  let stalled = false
  const server = createServer((client) => {
    const upstream = createConnection(target)
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
      socket.on('error', () => socket.destroy())
    }
    client.on('data', (chunk) => { if (!stalled) upstream.write(chunk) })
    upstream.on('data', (chunk) => { if (!stalled) client.write(chunk) })
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const port = (server.address() as AddressInfo).port

  const stop = async (): Promise<void> => {
    const closed = server.listening ? once(server, 'close') : Promise.resolve()
    server.close()
    for (const socket of sockets) socket.destroy()
    await closed
  }
  t.teardown(stop)

  return {
    port,
    stop,
    async start () {
      server.listen(port, '127.0.0.1')
      await once(server, 'listening')
    },
    stall () { stalled = true },
    resume () { stalled = false }
  }
}
