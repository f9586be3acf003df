// plant-store/client/webhooks: for the receivers of the service's webhooks. An
// entry of its own, so that the client alone stays free of packages.
import { Webhook, WebhookVerificationError } from 'standardwebhooks'
import type { NewPlant, PlantChangedEvent, PlantDeletedEvent, PlantEvent } from '../../schemas/index.js'
import { parseExact } from '../shared/exact-json.js'

export { WebhookVerificationError }
export type { NewPlant, PlantChangedEvent, PlantDeletedEvent, PlantEvent }

/** `events: true` for an endpoint registered with `events`: its body is the Standard Webhooks payload. */
export interface VerifyOptions { events?: boolean }

/** A request's headers: a fetch `Headers`, or Node's `request.headers`. */
export type WebhookHeaders = { get (name: string): string | null } | Record<string, string | string[] | undefined>

const NAMES = ['webhook-id', 'webhook-timestamp', 'webhook-signature']
const utf8 = new TextDecoder('utf-8', { fatal: true })

function header (headers: WebhookHeaders, name: string): string | undefined {
  if (typeof headers.get === 'function') return (headers as { get (name: string): string | null }).get(name) ?? undefined
  const entry = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1]
  return Array.isArray(entry) ? entry.join(' ') : entry
}

type Parsed = { id?: unknown, name?: unknown, tag?: unknown, type?: unknown, timestamp?: unknown, data?: Parsed } | null

// The NewPlant in `value`, its id an exact bigint; undefined when it is not one (`idOnly`: only `{id}`).
function plantOf (value: Parsed | undefined, idOnly = false): NewPlant | { id: bigint } | undefined {
  const { id, name, tag } = value ?? {}
  if (!(typeof id === 'bigint' || Number.isInteger(id))) return undefined
  const exact = BigInt(id as bigint | number)
  if (idOnly) return { id: exact }
  if (typeof name !== 'string' || !(tag === undefined || typeof tag === 'string')) return undefined
  return tag === undefined ? { id: exact, name } : { id: exact, name, tag }
}

/** Checks a webhook delivery's Standard Webhooks signature and timestamp, and returns what it tells of. */
export function verifyWebhook (secret: string, headers: WebhookHeaders, rawBody: string | Uint8Array, options?: { events?: false }): NewPlant
export function verifyWebhook (secret: string, headers: WebhookHeaders, rawBody: string | Uint8Array, options: { events: true }): PlantEvent
export function verifyWebhook (secret: string, headers: WebhookHeaders, rawBody: string | Uint8Array, options: VerifyOptions = {}): NewPlant | PlantEvent {
  let body: string
  try {
    body = typeof rawBody === 'string' ? rawBody : utf8.decode(rawBody)
  } catch {
    throw new WebhookVerificationError('The body is not valid UTF-8')
  }
  const signed: Record<string, string> = {}
  for (const name of NAMES) {
    const value = header(headers, name)
    if (value !== undefined) signed[name] = value
  }
  new Webhook(secret).verify(body, signed, { jsonParse: false })

  let parsed: Parsed
  try {
    parsed = parseExact(body) as Parsed
  } catch {
    parsed = null
  }
  if (options.events !== true) {
    const plant = plantOf(parsed)
    if (plant === undefined) throw new WebhookVerificationError('The body is not a NewPlant ({id, name, tag?})')
    return plant as NewPlant
  }
  const { type, timestamp } = parsed ?? {}
  const known = type === 'plant.created' || type === 'plant.updated' || type === 'plant.deleted'
  const data = known ? plantOf(parsed?.data, type === 'plant.deleted') : undefined
  if (data === undefined || typeof timestamp !== 'string') {
    throw new WebhookVerificationError('The body is not a plant event ({type, timestamp, data})')
  }
  return { type, timestamp, data } as PlantEvent
}
