import { once } from 'node:events'
import net from 'node:net'
import type { Test } from 'tap'

// PostgreSQL protocol messages that run a statement: Execute (extended protocol) and Query (simple).
const EXECUTE = 0x45
const QUERY = 0x51

/**
 * Calls `count` for each statement a client sends. The first message (the
 * startup packet) has no type byte; every later one is a type byte and a length.
 */
function countStatements (socket: net.Socket, count: () => void): void {
  let pending = Buffer.alloc(0)
  let started = false
  socket.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk])
    while (pending.length >= 5) {
      const length = started ? pending.readInt32BE(1) + 1 : pending.readInt32BE(0)
      if (pending.length < length) return
      if (started && (pending[0] === EXECUTE || pending[0] === QUERY)) count()
      started = true
      pending = pending.subarray(length)
    }
  })
}

/**
 * A TCP proxy to PostgreSQL that a test can cut (connections reset, new
 * ones refused), stall (connections open, nothing forwarded) and restore.
 * It counts the statements that pass through it.
 */
export class Proxy {
  readonly server = net.createServer((client) => this.accept(client))
  readonly sockets = new Set<net.Socket>()
  stalled = false
  port = 0
  /** Statements sent through the proxy so far. */
  statements = 0

  constructor (readonly target: URL) {}

  /** `target` with the proxy in place of the server. */
  get url (): string {
    const url = new URL(this.target)
    url.host = `127.0.0.1:${this.port}`
    return url.href
  }

  async listen (): Promise<void> {
    this.server.listen(this.port, '127.0.0.1')
    await once(this.server, 'listening')
    this.port = (this.server.address() as net.AddressInfo).port
  }

  private track (socket: net.Socket): void {
    this.sockets.add(socket)
    socket.on('close', () => this.sockets.delete(socket))
    socket.on('error', () => {})
  }

  private accept (client: net.Socket): void {
    this.track(client)
    if (this.stalled) return
    const upstream = net.connect(Number(this.target.port || 5432), this.target.hostname)
    this.track(upstream)
    countStatements(client, () => { this.statements++ })
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
    client.pipe(upstream).pipe(client)
  }

  private dropAll (): void {
    for (const socket of this.sockets) socket.destroy()
  }

  async cut (): Promise<void> {
    const closed = new Promise((resolve) => this.server.close(resolve))
    this.dropAll()
    await closed
  }

  stall (): void {
    this.stalled = true
    for (const socket of this.sockets) socket.unpipe()
  }

  async restore (): Promise<void> {
    this.dropAll()
    this.stalled = false
    if (!this.server.listening) await this.listen()
  }
}

/** A proxy to the database at `url`, listening, and closed when the test ends. */
export async function startProxy (t: Test, url: string): Promise<Proxy> {
  const proxy = new Proxy(new URL(url))
  await proxy.listen()
  t.teardown(() => proxy.cut())
  return proxy
}
