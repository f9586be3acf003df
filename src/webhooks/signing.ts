import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto'

/** Standard Webhooks signatures (standardwebhooks.com). */

const PREFIX = 'whsec_'

/** A new endpoint secret: `whsec_` and base64 of 32 random bytes. */
export function makeSecret (): string {
  return PREFIX + randomBytes(32).toString('base64')
}

export interface SignatureHeaders {
  'webhook-id': string
  'webhook-timestamp': string
  'webhook-signature': string
}

// A key object per secret, made once: from raw bytes, Node.js makes one for every HMAC.
const MAX_KEYS = 1024
const keys = new Map<string, KeyObject>()

function keyOf (secret: string): KeyObject {
  let key = keys.get(secret)
  if (key === undefined) {
    if (keys.size >= MAX_KEYS) keys.clear()
    key = createSecretKey(Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64'))
    keys.set(secret, key)
  }
  return key
}

function sign (secret: string, content: Buffer): string {
  return `v1,${createHmac('sha256', keyOf(secret)).update(content).digest('base64')}`
}

/** The headers of one attempt: `id` is the delivery's. */
export function signatureHeaders (id: string, body: string, secrets: readonly string[], now: number = Date.now()): SignatureHeaders {
  const timestamp = String(Math.floor(now / 1000))
  const content = Buffer.from(`${id}.${timestamp}.${body}`, 'utf8')
  return {
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': secrets.map((secret) => sign(secret, content)).join(' ')
  }
}
