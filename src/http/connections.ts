import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import proxyAddr from '@fastify/proxy-addr'
import type { FastifyInstance } from 'fastify'
import ipaddr from 'ipaddr.js'
import type { Config } from '../config/index.js'

/** How often, at most, each kind of refusal is reported in the log, in ms. */
const REPORT_EVERY = 10_000

export type ConnectionLimits = Pick<Config, 'maxConnections' | 'maxConnectionsPerAddress' | 'trustProxy'>

interface Connection {
  /** Whose it is (an IPv4 address, an IPv6 /64); undefined for a trusted proxy's, which carry many clients. */
  client?: string
  /** Requests received and not yet answered: idle at 0. */
  busy: number
  /** Called as each of its responses closes: made once per connection, not per request. */
  answered: () => void
}

interface Client {
  open: number
  /** Its idle connections, the longest idle first. */
  idle: Set<Socket>
}

/** Whose a connection from `address` is: one host holds a whole IPv6 /64 as easily as one address, so it is one client. */
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

/**
 * Caps the open connections, so that descriptors remain for the store and the log, and
 * so that no client can hold them all:
 * - one client address (an IPv6 /64) holds at most `maxConnectionsPerAddress`; a trusted
 *   proxy's (TRUST_PROXY) are exempt, as they carry every client behind it (the proxy
 *   caps its own clients);
 * - when a cap is reached, the connection idle the longest (a keep-alive between requests)
 *   of that address, or of all, is closed to admit the new one; only when none is idle is
 *   the new one refused, closed as soon as accepted.
 * A connection that has sent no request yet is not idle: Node's headers timeout ends it.
 * A descriptor table that is full anyway does not end the process: libuv refuses what it
 * cannot accept, and service resumes as others close. Refusals are reported at most every
 * ten seconds, not one line each.
 */
export function guardConnections (app: FastifyInstance, limits: ConnectionLimits): void {
  const { maxConnections, maxConnectionsPerAddress } = limits
  const isProxy = trusted(limits.trustProxy)
  const open = new Map<Socket, Connection>()
  // Every idle connection, the longest idle first (a Set keeps insertion order).
  const idle = new Set<Socket>()
  const clients = new Map<string, Client>()

  const refusedTotal = throttled((dropped) => app.log.warn({ dropped, maxConnections }, 'connections refused: MAX_CONNECTIONS are open'))
  const refusedAddress = throttled((dropped) => app.log.warn({ dropped, maxConnectionsPerAddress }, 'connections refused: MAX_CONNECTIONS_PER_ADDRESS are open from one address'))

  function forget (socket: Socket): void {
    const connection = open.get(socket)
    if (connection === undefined) return
    open.delete(socket)
    idle.delete(socket)
    if (connection.client === undefined) return
    const client = clients.get(connection.client) as Client
    client.idle.delete(socket)
    if (--client.open === 0) clients.delete(connection.client)
  }

  function closeIdlest (sockets: Set<Socket>): boolean {
    const [idlest] = sockets
    if (idlest === undefined) return false
    forget(idlest)
    idlest.destroy()
    return true
  }

  // First, before Node's HTTP server sets the connection up.
  app.server.prependListener('connection', (socket: Socket) => {
    const address = socket.remoteAddress
    const client = address !== undefined && isProxy(address) ? undefined : clientOf(address)
    const own = client === undefined ? undefined : clients.get(client)
    if (own !== undefined && own.open >= maxConnectionsPerAddress && !closeIdlest(own.idle)) {
      refusedAddress()
      socket.destroy()
      return
    }
    if (open.size >= maxConnections && !closeIdlest(idle)) {
      refusedTotal()
      socket.destroy()
      return
    }
    const connection: Connection = {
      client,
      busy: 0,
      answered: () => {
        // Idle from now, last in the order; unless it is closing (Connection: close), or closed.
        if (--connection.busy > 0 || !socket.writable || !open.has(socket)) return
        idle.add(socket)
        if (client !== undefined) (clients.get(client) as Client).idle.add(socket)
      }
    }
    open.set(socket, connection)
    if (client !== undefined) {
      if (own === undefined) clients.set(client, { open: 1, idle: new Set() })
      else own.open++
    }
    socket.once('close', () => forget(socket))
  })

  app.server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket
    const connection = open.get(socket)
    /* c8 ignore next -- every connection is tracked from its start, and one closed to make room carries no more requests */
    if (connection === undefined) return
    if (connection.busy++ === 0) {
      idle.delete(socket)
      if (connection.client !== undefined) (clients.get(connection.client) as Client).idle.delete(socket)
    }
    // A response closes once: `on` spares the wrapper `once` would make.
    response.on('close', connection.answered)
  })

  // An 'error' event without a listener is thrown. Errors of listen() reach Fastify's own listener.
  app.server.on('error', (error: NodeJS.ErrnoException) => {
    /* c8 ignore next 2 -- libuv turns EMFILE at accept into this event only when its reserve descriptor is gone too */
    if (error.syscall === 'accept') app.log.error({ err: error }, 'a connection could not be accepted')
  })
}
