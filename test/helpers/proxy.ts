import { once } from 'node:events'
import net from 'node:net'
import type { Test } from 'tap'

// PostgreSQL protocol messages that run a statement: Execute (extended protocol) and Query (simple).
const EXECUTE = 0x45
const QUERY = 0x51

const DEFAULT_PORTS: Record<string, number> = { 'postgres:': 5432, 'postgresql:': 5432, 'redis:': 6379, 'http:': 80 }

/**
 * Calls `count` for each statement a PostgreSQL client sends. The first message
 * (the startup packet) has no type byte; every later one is a type byte and a length.
 */
function statementCounter (count: () => void): (chunk: Buffer) => void {
  let pending = Buffer.alloc(0)
  let started = false
  return (chunk) => {
    pending = Buffer.concat([pending, chunk])
    while (pending.length >= 5) {
      const length = started ? pending.readInt32BE(1) + 1 : pending.readInt32BE(0)
      if (pending.length < length) return
      if (started && (pending[0] === EXECUTE || pending[0] === QUERY)) count()
      started = true
      pending = pending.subarray(length)
    }
  }
}

/**
 * A TCP proxy on 127.0.0.1 in front of a real server (PostgreSQL, Redis, the
 * service), which a test can use to play the server's troubles without touching
 * the server: cut (connections reset, new ones refused), stall (connections
 * open, nothing passed on), lose answers, and restore. In front of PostgreSQL it
 * counts the statements that pass through it.
 */
export class Proxy {
  private readonly server = net.createServer((client) => this.accept(client))
  private readonly sockets = new Set<net.Socket>()
  private stalled = false
  port = 0
  /** While above zero, the next answer from the server is not passed on, and the client's connection is cut instead: the request was done, only its answer is lost. */
  drops = 0
  /** Statements sent through the proxy so far (in front of PostgreSQL). */
  statements = 0

  private hold: { marker: Buffer, reached: () => void, release?: () => void } | undefined

  constructor (readonly target: URL) {}

  /**
   * Holds the next client message that contains `marker` (a named statement's name, which
   * its Parse and every Bind carry) and what follows it on that connection, until the
   * returned `release` is called: the statement is sent late, as if the network were slow,
   * while the rest of the server goes on. `reached` resolves when the message is held.
   */
  holdNext (marker: string): { reached: Promise<void>, release: () => void } {
    let reached = (): void => {}
    const whenReached = new Promise<void>((resolve) => { reached = resolve })
    const hold: NonNullable<Proxy['hold']> = { marker: Buffer.from(marker), reached }
    this.hold = hold
    return {
      reached: whenReached,
      release: () => {
        if (this.hold === hold) this.hold = undefined
        hold.release?.()
      }
    }
  }

  private forward (client: net.Socket, upstream: net.Socket, chunk: Buffer): void {
    const hold = this.hold
    if (hold === undefined || hold.release !== undefined || !chunk.includes(hold.marker)) {
      upstream.write(chunk)
      return
    }
    client.pause()
    hold.release = () => {
      upstream.write(chunk)
      client.resume()
    }
    hold.reached()
  }

  /** `target` with the proxy in place of the server. */
  get url (): string {
    const url = new URL(this.target)
    url.host = `127.0.0.1:${this.port}`
    return url.href
  }

  /** Listens (again, on the same port once it has one). */
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
    // A connection made while stalled is held open, and reaches nothing.
    if (this.stalled) return
    const upstream = net.connect(Number(this.target.port) || DEFAULT_PORTS[this.target.protocol], this.target.hostname)
    this.track(upstream)
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
    if (this.target.protocol.startsWith('postgres')) client.on('data', statementCounter(() => { this.statements++ }))
    client.on('data', (chunk: Buffer) => this.forward(client, upstream, chunk))
    upstream.on('data', (chunk) => {
      if (this.drops > 0) {
        this.drops--
        client.destroy()
      } else {
        client.write(chunk)
      }
    })
  }

  private dropAll (): void {
    for (const socket of this.sockets) socket.destroy()
  }

  /** Closes the listener and every connection: the server looks down. */
  async cut (): Promise<void> {
    const closed = this.server.listening ? once(this.server, 'close') : Promise.resolve()
    this.server.close()
    this.dropAll()
    await closed
  }

  /**
   * Keeps every connection open and passes nothing on: the server looks hung. With
   * `newOnly`, the connections already made go on working and only new ones hang,
   * as when a server stops accepting.
   */
  stall ({ newOnly = false } = {}): void {
    this.stalled = true
    if (!newOnly) for (const socket of this.sockets) socket.pause()
  }

  /** Drops every connection (a stalled one is of no more use) and takes new ones to the server again. */
  async restore (): Promise<void> {
    this.dropAll()
    this.stalled = false
    if (!this.server.listening) await this.listen()
  }
}

/** A proxy to the server at `url` (`postgres://…`, `redis://…`, `http://…`), listening, and closed when the test ends. */
export async function startProxy (t: Test, url: string): Promise<Proxy> {
  const proxy = new Proxy(new URL(url))
  await proxy.listen()
  t.teardown(() => proxy.cut())
  return proxy
}
