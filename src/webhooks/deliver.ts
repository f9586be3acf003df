import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns'
import { isIP, type LookupFunction } from 'node:net'
import { Agent, buildConnector, request } from 'undici'
import type { AttemptOutcome, ClaimedDelivery } from '../store/webhook-types.js'
import { refusedAddress } from './address.js'
import { nextAttemptAt } from './schedule.js'
import { signatureHeaders } from './signing.js'

/** What a receiver's answer may weigh: the rest is never read. */
export const RESPONSE_CAP = 1024
const USER_AGENT = 'plant-store-webhooks/1'
// How long an idle connection to a receiver is kept, in ms, and how many attempts one carries.
const KEEP_ALIVE = 4000
const MAX_REQUESTS = 100

export interface AttemptOptions {
  /** WEBHOOK_ALLOW_PRIVATE: loopback and private addresses may be dialled. */
  allowPrivate: boolean
  /** WEBHOOK_TIMEOUT: the whole attempt, connection to last byte read, in ms. */
  timeout: number
  /** WEBHOOK_RETRY_SCHEDULE, in ms. */
  schedule: readonly number[]
  /** Resolves host names (dns.lookup but in a test). */
  resolve?: Resolve
}

/** What a delivery's lastError says of a host name the service may not reach, whatever the reason. */
export const NO_PUBLIC_ADDRESS = 'refused: no public address'

/** The connection would go to an address the rule refuses, or its host name has no address. */
export class RefusedAddressError extends Error {
  constructor (rule?: string) {
    super(rule === undefined ? NO_PUBLIC_ADDRESS : `refused: ${rule}`)
    this.name = 'RefusedAddressError'
  }
}

export type Resolve = (hostname: string, options: LookupAllOptions, callback: (error: Error | null, addresses: LookupAddress[]) => void) => void

/** A `lookup` for net.connect: resolves every address of the name. */
export function guardedLookup (allowPrivate: boolean, resolve: Resolve = dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    const reply = callback as (error: Error | null, address?: string | LookupAddress[], family?: number) => void
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error !== null || addresses.length === 0) return reply(new RefusedAddressError())
      if (addresses.some(({ address }) => refusedAddress(address, allowPrivate) !== undefined)) return reply(new RefusedAddressError())
      // Node asks for every address when it races IPv4 and IPv6 (autoSelectFamily), else for one.
      if (options.all === true) reply(null, addresses)
      else reply(null, addresses[0].address, addresses[0].family)
    })
  }
}

/** An undici Agent that checks the address each connection actually goes to. */
export function createWebhookAgent (options: Pick<AttemptOptions, 'allowPrivate' | 'timeout' | 'resolve'>): Agent {
  const connect = buildConnector({ lookup: guardedLookup(options.allowPrivate, options.resolve), timeout: options.timeout })
  return new Agent({
    // A connection, checked when it was made.
    keepAliveTimeout: KEEP_ALIVE,
    keepAliveMaxTimeout: KEEP_ALIVE,
    maxRequestsPerClient: MAX_REQUESTS,
    connect (connectOptions, callback) {
      const rule = isIP(connectOptions.hostname) === 0 ? undefined : refusedAddress(connectOptions.hostname, options.allowPrivate)
      if (rule !== undefined) return callback(new RefusedAddressError(rule), null)
      connect(connectOptions, callback)
    }
  })
}

// What is kept as the delivery's last error: short, and never the receiver's own words.
function describe (error: Error & { code?: string }, timedOut: boolean, timeout: number): string {
  if (timedOut) return `no answer within ${timeout} ms`
  if (error instanceof RefusedAddressError) return error.message
  return [error.code, error.message].filter(Boolean).join(': ').slice(0, 200)
}

// Reads at most RESPONSE_CAP bytes of the answer, then lets the connection go.
async function drain (body: AsyncIterable<Buffer> & { destroy: () => void }): Promise<void> {
  let read = 0
  for await (const chunk of body) {
    read += chunk.length
    if (read >= RESPONSE_CAP) break
  }
  body.destroy()
}

function decide (attempts: number, schedule: readonly number[], status?: number, error?: string): AttemptOutcome {
  if (status !== undefined && status >= 200 && status < 300) return { result: 'succeeded', status }
  if (status === 410) return { result: 'gone', status }
  const at = nextAttemptAt(schedule, attempts + 1)
  return at === undefined ? { result: 'failed', status, error } : { result: 'retry', at, status, error }
}

/** One attempt: POST the stored body byte for byte, signed, through `agent`, within the timeout. */
export async function attempt (agent: Agent, delivery: ClaimedDelivery, options: AttemptOptions, headers: Record<string, string> = {}): Promise<AttemptOutcome> {
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), options.timeout)
  let status: number | undefined
  let error: string | undefined
  try {
    const response = await request(delivery.url, {
      dispatcher: agent,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        // What an observer adds (a traceparent), never in place of the signature.
        ...headers,
        ...signatureHeaders(delivery.id, delivery.body, delivery.secrets)
      },
      body: Buffer.from(delivery.body, 'utf8'),
      signal: controller.signal
    })
    status = response.statusCode
    if (status >= 300 && status < 400) error = 'a redirect is not followed'
    // The status decides; what the body says is never used, and a slow one does not undo a 2xx.
    await drain(response.body).catch(() => {})
  } catch (failure) {
    error = describe(failure as Error, controller.signal.aborted, options.timeout)
  }
  clearTimeout(timer)
  return decide(delivery.attempts, options.schedule, status, error)
}
