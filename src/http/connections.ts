import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import proxyAddr from '@fastify/proxy-addr'
import type { FastifyInstance } from 'fastify'
import ipaddr from 'ipaddr.js'
import type { Config } from '../config/index.js'

/** How often, at most, each kind of refusal is reported in the log, in ms. */
const REPORT_EVERY = 10_000

export type ConnectionLimits = Pick<Config, 'maxConnections' | 'maxConnectionsPerAddress' | 'trustProxy'>

interface Client {
  key: string
  open: number
  /** Its idle connections, the longest idle first. */
  idle: Set<Socket>
}

interface Connection {
  /** Whose it is (an IPv4 address, an IPv6 /64); undefined for a trusted proxy's, which carry many clients. */
  client?: Client
  /** Requests received and not yet answered: idle at 0. */
  busy: number
  /** The last request received on it; until it is complete, the connection has not sent a whole request. */
  request?: IncomingMessage
}

/** Whose a connection from `address` is: one host holds a whole IPv6 /64 as easily as one address. */
export function clientOf (address: string | undefined): string {
  if (address === undefined) return 'unknown'
  const ip = ipaddr.process(address)
  return ip.kind() === 'ipv4' ? ip.toString() : `${ip.toNormalizedString().split(':').slice(0, 4).join(':')}::/64`
}

// Fastify's reading of trustProxy (a list of addresses, ranges and names, or true for any).
function trusted (trustProxy: boolean | string): (address: string) => boolean {
  if (typeof trustProxy === 'boolean') return () => trustProxy
  const trust = proxyAddr.compile(trustProxy.split(',').map((entry) => entry.trim()))
  return (address) => trust(address, 0)
}

function throttled (report: (count: number) => void): () => void {
  let count = 0
  let reported = 0
  return () => {
    count++
    if (Date.now() - reported < REPORT_EVERY) return
    report(count)
    reported = Date.now()
    count = 0
  }
}

/** Caps the open connections, so that descriptors remain for the store and the log. */
export function guardConnections (app: FastifyInstance, limits: ConnectionLimits): void {
  const { maxConnections, maxConnectionsPerAddress } = limits
  const isProxy = trusted(limits.trustProxy)
  // Every open connection, the oldest first (a Map keeps insertion order).
  const open = new Map<Socket, Connection>()
  // Every idle connection, the longest idle first.
  const idle = new Set<Socket>()
  const clients = new Map<string, Client>()

  const refusedTotal = throttled((dropped) => app.log.warn({ dropped, maxConnections }, 'connections refused: MAX_CONNECTIONS are open'))
  const closedUnfinished = throttled((closed) => app.log.warn({ closed, maxConnections }, 'connections that had not sent a whole request closed: MAX_CONNECTIONS are open'))
  const refusedAddress = throttled((dropped) => app.log.warn({ dropped, maxConnectionsPerAddress }, 'connections refused: MAX_CONNECTIONS_PER_ADDRESS are open from one address'))

  function forget (socket: Socket): void {
    const connection = open.get(socket)
    if (connection === undefined) return
    open.delete(socket)
    idle.delete(socket)
    const client = connection.client
    if (client === undefined) return
    client.idle.delete(socket)
    if (--client.open === 0) clients.delete(client.key)
  }

  function close (socket: Socket): true {
    forget(socket)
    socket.destroy()
    return true
  }

  function closeIdlest (sockets: Set<Socket>): boolean {
    const [idlest] = sockets
    return idlest !== undefined && close(idlest)
  }

  // The oldest connection whose request has not all arrived: the ones before it are answering one.
  function closeOldestUnfinished (): boolean {
    for (const [socket, connection] of open) {
      if (connection.request === undefined || !connection.request.complete) {
        closedUnfinished()
        return close(socket)
      }
    }
    return false
  }

  // First, before Node's HTTP server sets the connection up.
  app.server.prependListener('connection', (socket: Socket) => {
    const address = socket.remoteAddress
    const key = address !== undefined && isProxy(address) ? undefined : clientOf(address)
    let client = key === undefined ? undefined : clients.get(key)
    if (client !== undefined && client.open >= maxConnectionsPerAddress && !closeIdlest(client.idle)) {
      refusedAddress()
      socket.destroy()
      return
    }
    if (open.size >= maxConnections && !closeIdlest(idle) && !closeOldestUnfinished()) {
      refusedTotal()
      socket.destroy()
      return
    }
    if (key !== undefined) {
      // Looked up again: making room may have closed this client's last connection.
      client = clients.get(key)
      if (client === undefined) clients.set(key, client = { key, open: 0, idle: new Set() })
      client.open++
    }
    open.set(socket, { client, busy: 0, request: undefined })
    socket.once('close', () => forget(socket))
  })

  // Idle from the end of its answer, last in the order; unless it is closing (Connection: close), or closed.
  function answered (this: ServerResponse): void {
    const socket = this.req.socket
    const connection = open.get(socket)
    if (connection === undefined || --connection.busy > 0 || !socket.writable) return
    idle.add(socket)
    connection.client?.idle.add(socket)
  }

  app.server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket
    const connection = open.get(socket)
    /* c8 ignore next -- every connection is tracked from its start, and one closed to make room carries no more requests */
    if (connection === undefined) return
    connection.request = request
    if (connection.busy++ === 0) {
      idle.delete(socket)
      connection.client?.idle.delete(socket)
    }
    // One function for every answer: nothing is allocated per request.
    response.on('finish', answered)
  })

  // An 'error' event without a listener is thrown. Errors of listen() reach Fastify's own listener.
  app.server.on('error', (error: NodeJS.ErrnoException) => {
    /* c8 ignore next 2 -- libuv turns EMFILE at accept into this event only when its reserve descriptor is gone too */
    if (error.syscall === 'accept') app.log.error({ err: error }, 'a connection could not be accepted')
  })
}
