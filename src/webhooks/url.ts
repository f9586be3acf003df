import { isIP } from 'node:net'
import { refusedAddress } from './address.js'

export const MAX_URL_LENGTH = 2048

/** Checks an endpoint URL at registration, without any connection. */
export function checkEndpointUrl (text: string, allowPrivate: boolean): string | undefined {
  if (text.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters long`
  // The URL parser drops leading and trailing spaces and any tab or newline inside.
  if ([...text].some((char) => char <= ' ' || char === '\u007f')) return 'must not contain spaces or control characters'
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return 'must be an absolute http or https URL'
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an absolute http or https URL'
  if (url.username !== '' || url.password !== '') return 'must not contain user info (a user name or password)'
  // The parser gives the canonical form, so `0x7f.1`.
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
  if (isIP(host) === 0) return undefined
  const refused = refusedAddress(host, allowPrivate)
  if (refused === undefined) return undefined
  return `must not name ${refused} (${host}): webhooks go to public addresses` +
    (refusedAddress(host, true) === undefined ? ' unless the service runs with WEBHOOK_ALLOW_PRIVATE=true' : '')
}
