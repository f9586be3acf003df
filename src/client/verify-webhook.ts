// plant-store/client/webhooks: for the receivers of the service's webhooks. An
// entry of its own, so that the client alone stays free of packages.
import { Webhook, WebhookVerificationError } from 'standardwebhooks'
import type { NewPlant } from '../../schemas/index.js'
import { parseExact } from '../shared/exact-json.js'

export { WebhookVerificationError }
export type { NewPlant }

/** A request's headers: a fetch `Headers`, or Node's `request.headers`. */
export type WebhookHeaders = { get (name: string): string | null } | Record<string, string | string[] | undefined>

const NAMES = ['webhook-id', 'webhook-timestamp', 'webhook-signature']
const utf8 = new TextDecoder('utf-8', { fatal: true })

function header (headers: WebhookHeaders, name: string): string | undefined {
  if (typeof headers.get === 'function') return (headers as { get (name: string): string | null }).get(name) ?? undefined
  const entry = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1]
  return Array.isArray(entry) ? entry.join(' ') : entry
}

/**
 * Checks a webhook delivery of the service (Standard Webhooks: a `v1` HMAC-SHA256
 * signature of `webhook-id.webhook-timestamp.body` under `secret`, and a timestamp
 * within 5 minutes of now) and returns the plant it tells of, its id an exact
 * bigint. `rawBody` is the body exactly as received: verify before any parsing.
 * Throws WebhookVerificationError when the delivery is not one to trust: answer
 * it with a 4xx. Deduplicate deliveries by their `webhook-id`: they come at least once.
 */
export function verifyWebhook (secret: string, headers: WebhookHeaders, rawBody: string | Uint8Array): NewPlant {
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

  let plant: { id?: unknown, name?: unknown, tag?: unknown } | null
  try {
    plant = parseExact(body) as typeof plant
  } catch {
    plant = null
  }
  const { id, name, tag } = plant ?? {}
  if (!(typeof id === 'bigint' || Number.isInteger(id)) || typeof name !== 'string' || !(tag === undefined || typeof tag === 'string')) {
    throw new WebhookVerificationError('The body is not a NewPlant ({id, name, tag?})')
  }
  const exact = BigInt(id as bigint | number)
  return tag === undefined ? { id: exact, name } : { id: exact, name, tag }
}
