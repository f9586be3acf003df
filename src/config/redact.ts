/** What stands in the place of a secret in a log line or a message. */
export const REDACTED = '[REDACTED]'

// Query parameter names that carry credentials by convention.
const SENSITIVE_NAME = /token|secret|passw|pwd|key|auth|sig|credential|session/i

function decodeName (name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '))
  } catch {
    return name
  }
}

/** A URL (or path with a query) with the values of credential-like query parameters replaced. */
export function redactUrl (url: string): string {
  const question = url.indexOf('?')
  if (question === -1) return url
  const query = url.slice(question + 1).split('&').map((pair) => {
    const equals = pair.indexOf('=')
    return equals !== -1 && SENSITIVE_NAME.test(decodeName(pair.slice(0, equals))) ? `${pair.slice(0, equals + 1)}${REDACTED}` : pair
  })
  return `${url.slice(0, question + 1)}${query.join('&')}`
}

// Where the password of a database URL lies, even when the URL is malformed.
function passwordSpan (value: string): [number, number] | undefined {
  const at = value.lastIndexOf('@')
  const userStart = /^[a-z][a-z0-9+.-]*:\/\//i.exec(value)?.[0].length ?? 0
  const colon = value.indexOf(':', userStart)
  return colon !== -1 && colon < at ? [colon + 1, at] : undefined
}

/** A database URL without its password (in the user info or the query), even when it is malformed. */
export function redactDatabaseUrl (value: string): string {
  const span = passwordSpan(value)
  return redactUrl(span === undefined ? value : `${value.slice(0, span[0])}${REDACTED}${value.slice(span[1])}`)
}

/** The password of a database URL, as written and decoded: what must never be printed. */
export function databaseSecrets (value: string): string[] {
  const span = passwordSpan(value)
  if (span === undefined || span[0] === span[1]) return []
  const password = value.slice(span[0], span[1])
  try {
    return [password, decodeURIComponent(password)]
  } catch {
    return [password]
  }
}

// Where the user info of a URL lies, even when it is malformed.
function userInfoSpan (value: string): [number, number] | undefined {
  const at = value.lastIndexOf('@')
  const start = /^[a-z][a-z0-9+.-]*:\/\//i.exec(value)?.[0].length ?? 0
  return start < at ? [start, at] : undefined
}

/**
 * A collector's endpoint (OTEL_EXPORTER_OTLP_ENDPOINT) without its user info, which is a credential as a
 * whole.
 */
export function redactEndpoint (value: string): string {
  const span = userInfoSpan(value)
  return redactUrl(span === undefined ? value : `${value.slice(0, span[0])}${REDACTED}${value.slice(span[1])}`)
}

/** The user info of an endpoint, and its password, as written and decoded: what must never be printed. */
export function endpointSecrets (value: string): string[] {
  const span = userInfoSpan(value)
  if (span === undefined) return []
  const userInfo = value.slice(...span)
  let decoded = userInfo
  try {
    decoded = decodeURIComponent(userInfo)
  } catch {}
  return [...new Set([userInfo, decoded, ...databaseSecrets(value)])]
}

/** `message` with every occurrence of each secret replaced: for text the service does not write itself. */
export function redactSecrets (message: string, secrets: Iterable<string>): string {
  let redacted = message
  for (const secret of secrets) {
    // As written, and as it reads inside a JSON string (a log line).
    for (const form of new Set([secret, JSON.stringify(secret).slice(1, -1)])) {
      if (form !== '') redacted = redacted.replaceAll(form, REDACTED)
    }
  }
  return redacted
}

/** Every secret of the configuration's URLs, as written and decoded: what a start-up failure must not print. */
export function configSecrets (config: { databaseUrl: string, redisUrl?: string, tracing?: { url: string } }): string[] {
  return [
    ...databaseSecrets(config.databaseUrl),
    ...databaseSecrets(config.redisUrl ?? ''),
    ...endpointSecrets(config.tracing?.url ?? '')
  ]
}
