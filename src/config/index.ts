// src/config: the service's configuration, read from the environment and checked once at start.

import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import type { ErrorObject } from 'ajv'
import envSchema from 'env-schema'
import { redactDatabaseUrl, redactEndpoint } from './redact.js'
import { isScope, SCOPES, type Scope, type ScopedToken } from '../shared/scopes.js'

function oneOf<T extends string> (values: readonly T[], description: string) {
  return Type.Unsafe<T>({ type: 'string', enum: values, description })
}

// The OpenTelemetry specification's OTEL_TRACES_SAMPLER values that need no extension.
const SAMPLERS = ['parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio', 'always_on', 'always_off', 'traceidratio'] as const

const SCHEDULE_ACCEPTS = 'comma-separated delays, each plain decimal digits and a unit (ms, s, m or h), such as 5s,5m,30m, at most 100 of them'
const RETENTION_ACCEPTS = 'a delay of plain decimal digits and a unit (ms, s, m or h), such as 168h'
const DISABLE_AFTER_ACCEPTS = 'a delay of plain decimal digits and a unit (ms, s, m or h), such as 120h'
const EVENTS_RETENTION_ACCEPTS = '0 (the change feed off) or a delay of plain decimal digits and a unit (ms, s, m or h), such as 168h'
const TRUST_PROXY_ACCEPTS = 'true, false, or comma-separated proxy addresses, CIDR ranges, loopback, linklocal or uniquelocal'
const CORS_ORIGINS_ACCEPTS = '* or comma-separated origins, each http(s)://host[:port] exactly as a browser sends it (no path, no trailing slash, no default port)'

// Each description says what the variable accepts: it is the start-up error's text.
export const Environment = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000, description: 'a TCP port, an integer from 0 to 65535' }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1', description: 'a bind address such as 127.0.0.1 or 0.0.0.0' }),
  API_TOKENS: Type.Optional(Type.String({ description: 'comma-separated bearer tokens' })),
  API_TOKENS_FILE: Type.Optional(Type.String({ minLength: 1, description: 'the path of a file with one token per line, each optionally followed by its scopes' })),
  DATABASE_URL: Type.String({
    pattern: '^(sqlite:.+|postgres(ql)?://.+)$',
    default: 'sqlite:./data/plants.db',
    description: 'sqlite:<path>, sqlite::memory:, postgres://… or postgresql://…'
  }),
  SQLITE_SYNCHRONOUS: oneOf(['normal', 'full'] as const, 'normal or full'),
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 1000, default: 10, description: 'an integer from 1 to 1000' }),
  DATABASE_TIMEOUT: Type.Integer({ minimum: 100, maximum: 600000, default: 5000, description: 'milliseconds, an integer from 100 to 600000' }),
  DATABASE_QUEUE_LIMIT: Type.Integer({ minimum: 1, maximum: 1000000, default: 10000, description: 'an integer from 1 to 1000000' }),
  BODY_LIMIT: Type.Integer({ minimum: 1, default: 1048576, description: 'a positive integer, in bytes' }),
  REQUEST_TIMEOUT: Type.Integer({ minimum: 100, maximum: 3600000, default: 30000, description: 'milliseconds, an integer from 100 to 3600000' }),
  HEADERS_TIMEOUT: Type.Integer({ minimum: 100, maximum: 3600000, default: 10000, description: 'milliseconds, an integer from 100 to 3600000, at most REQUEST_TIMEOUT' }),
  KEEP_ALIVE_TIMEOUT: Type.Integer({ minimum: 100, maximum: 3600000, default: 72000, description: 'milliseconds, an integer from 100 to 3600000' }),
  RATE_LIMIT_MAX: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000000000, description: 'an integer from 1 to 1000000000 (unset: no rate limit)' })),
  RATE_LIMIT_WINDOW: Type.Integer({ minimum: 1000, maximum: 86400000, default: 60000, description: 'milliseconds, an integer from 1000 to 86400000' }),
  MAX_CONNECTIONS: Type.Integer({ minimum: 1, maximum: 1000000, default: 1000, description: 'an integer from 1 to 1000000' }),
  MAX_CONNECTIONS_PER_ADDRESS: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000000, description: 'an integer from 1 to 1000000 (unset: a quarter of MAX_CONNECTIONS)' })),
  AUTH_FAILURE_LIMIT: Type.Integer({ minimum: 1, maximum: 1000000000, default: 20, description: 'an integer from 1 to 1000000000' }),
  AUTH_FAILURE_WINDOW: Type.Integer({ minimum: 1000, maximum: 86400000, default: 60000, description: 'milliseconds, an integer from 1000 to 86400000' }),
  TRUST_PROXY: Type.Optional(Type.String({ description: TRUST_PROXY_ACCEPTS })),
  CORS_ORIGINS: Type.Optional(Type.String({ description: CORS_ORIGINS_ACCEPTS })),
  MAX_EVENT_LOOP_DELAY: Type.Integer({ minimum: 0, maximum: 60000, default: 1000, description: 'milliseconds, an integer from 0 (no load shedding) to 60000' }),
  REDIS_URL: Type.Optional(Type.String({
    pattern: '^rediss?://[^\\s]+$',
    description: 'redis://[[user]:password@]host[:port][/db] or rediss://… (unset: limits kept in memory)'
  })),
  REDIS_KEY_PREFIX: Type.String({ minLength: 1, maxLength: 200, default: 'plant-store:', description: 'a non-empty prefix for the keys of the shared limits, at most 200 characters' }),
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$', description: 'an http:// or https:// URL of an OTLP/HTTP collector (unset: no tracing)' })),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$', description: 'an http:// or https:// URL that receives the traces as it is (unset: OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces)' })),
  OTEL_EXPORTER_OTLP_PROTOCOL: oneOf(['http/protobuf', 'http/json'] as const, 'http/protobuf or http/json (grpc is not supported)'),
  OTEL_TRACES_SAMPLER: oneOf(SAMPLERS, SAMPLERS.join(', ')),
  OTEL_TRACES_SAMPLER_ARG: Type.Optional(Type.String({ pattern: '^(0(\\.[0-9]+)?|1(\\.0+)?)$', description: 'a ratio from 0 to 1 such as 0.25, the share of new traces the traceidratio samplers keep' })),
  OTEL_SERVICE_NAME: Type.String({ minLength: 1, default: 'plant-store', description: 'a non-empty service name' }),
  METRICS: oneOf(['true', 'false'] as const, 'true or false'),
  WEBHOOK_ALLOW_PRIVATE: oneOf(['true', 'false'] as const, 'true or false'),
  WEBHOOK_RETRY_SCHEDULE: Type.String({ default: '5s,5m,30m,2h,5h,10h,10h', description: SCHEDULE_ACCEPTS }),
  WEBHOOK_TIMEOUT: Type.Integer({ minimum: 100, maximum: 600000, default: 15000, description: 'milliseconds, an integer from 100 to 600000' }),
  WEBHOOK_RETENTION: Type.String({ default: '168h', description: RETENTION_ACCEPTS }),
  WEBHOOK_DISABLE_AFTER: Type.String({ default: '120h', description: DISABLE_AFTER_ACCEPTS }),
  EVENTS_RETENTION: Type.String({ default: '168h', description: EVENTS_RETENTION_ACCEPTS }),
  WEBHOOK_ENDPOINT_LIMIT: Type.Integer({ minimum: 1, maximum: 100000, default: 100, description: 'an integer from 1 to 100000' }),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const,
    'one of fatal, error, warn, info, debug, trace, silent'),
  NODE_ENV: Type.Optional(Type.String())
})

export type Environment = Static<typeof Environment>

export interface Config {
  port: number
  host: string
  /** Accepted bearer tokens: API_TOKENS and API_TOKENS_FILE together; a string has every scope. */
  tokens: Array<string | ScopedToken>
  /** Where a configured token is shorter than MIN_TOKEN_LENGTH: one warning each, at start. */
  shortTokens: string[]
  /** Set when no token was configured and one was made for this run. */
  generatedToken?: string
  databaseUrl: string
  sqliteSynchronous: 'normal' | 'full'
  /** PostgreSQL: connections in the pool. */
  databasePoolSize: number
  /** Longest wait for the store in total (queue, connect, lock and statement) before a 503, in ms. */
  databaseTimeout: number
  /** Writes waiting for a batch at most; beyond it, a 503 at once. */
  databaseQueueLimit: number
  bodyLimit: number
  /** Longest time for a whole request (headers and body) to arrive, in ms; then a 408. */
  requestTimeout: number
  /** Longest time for the request headers to arrive, in ms; then a 408. */
  headersTimeout: number
  /** How long an idle keep-alive connection stays open, in ms. */
  keepAliveTimeout: number
  /** Requests per token and window; undefined: no rate limit. */
  rateLimitMax?: number
  /** The rate limit's window, in ms. */
  rateLimitWindow: number
  /** Open connections at most: beyond, the one idle the longest is closed, or else the oldest unfinished one. */
  maxConnections: number
  /** Open connections from one client address (an IPv6 /64) at most, a trusted proxy's excepted. */
  maxConnectionsPerAddress: number
  /** Failed authentications per client address and window before its requests get a 429. */
  authFailureLimit: number
  /** The window of authFailureLimit, in ms. */
  authFailureWindow: number
  /** Fastify's trustProxy: which proxies' X-Forwarded-For names the client address. */
  trustProxy: boolean | string
  /** Origins whose pages may call the API from a browser, or `['*']` for any; empty: no CORS headers. */
  corsOrigins: string[]
  /** Event loop delay, in ms, above which API requests are shed with a 503. */
  maxEventLoopDelay: number
  /** The Redis that holds the limits shared by all replicas; undefined: each instance counts alone. */
  redisUrl?: string
  /** Put before every key the shared limits write in Redis. */
  redisKeyPrefix: string
  /** Where traces go (OTLP over HTTP); undefined: no tracing, and no OpenTelemetry SDK loaded. */
  tracing?: TracingConfig
  /** GET /metrics and the measurements behind it. */
  metrics: boolean
  /** Webhooks may reach loopback and private addresses (tests, internal networks). */
  webhookAllowPrivate: boolean
  /** The delays before each retry of a delivery, in ms; after the last one it is failed. */
  webhookRetrySchedule: number[]
  /** How long a receiver has for one attempt, in ms. */
  webhookTimeout: number
  /** How long a finished delivery (succeeded or failed) stays listed before it is pruned, in ms. */
  webhookRetention: number
  /** How long an endpoint may fail every attempt, since its last success, before it is disabled, in ms. */
  webhookDisableAfter: number
  /** The most webhook endpoints the service keeps: registering one more is a 409. */
  webhookEndpointLimit: number
  /** How long the change feed keeps an event at least, in ms; 0: no feed (GET /events is a 404). */
  eventsRetention: number
  logLevel: Environment['LOG_LEVEL']
}

export interface TracingConfig {
  /** The URL the spans are posted to (…/v1/traces). */
  url: string
  protocol: 'http/protobuf' | 'http/json'
  serviceName: string
  /** Which traces are recorded: OTEL_TRACES_SAMPLER, and its ratio (OTEL_TRACES_SAMPLER_ARG, 1 when unset). */
  sampler: { name: typeof SAMPLERS[number], ratio: number }
}

/** A configuration problem, with a one-line message that names the variable. */
export class ConfigError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'ConfigError'
  }
}

const DEFAULTS: Record<string, string> = { SQLITE_SYNCHRONOUS: 'normal', WEBHOOK_ALLOW_PRIVATE: 'false', LOG_LEVEL: 'info', METRICS: 'true', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_TRACES_SAMPLER: 'parentbased_always_on' }

// The OpenTelemetry specification's rule: the base endpoint gets the signal's path.
function readTracing (env: Environment): TracingConfig | undefined {
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT
  const url = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base === undefined ? undefined : `${base.replace(/\/+$/, '')}/v1/traces`)
  if (url === undefined) return undefined
  const sampler = { name: env.OTEL_TRACES_SAMPLER, ratio: Number(env.OTEL_TRACES_SAMPLER_ARG ?? 1) }
  return { url, protocol: env.OTEL_EXPORTER_OTLP_PROTOCOL, serviceName: env.OTEL_SERVICE_NAME, sampler }
}

// Ajv would take `0x10`, `1e3` or ` 5` for numbers: a number is plain decimal digits.
function looseNumbers (data: Record<string, string | undefined>): string[] {
  return Object.entries(Environment.properties as Record<string, TSchema>)
    .filter(([name, schema]) => schema.type === 'integer' && !/^[0-9]+$/.test(data[name] ?? '0'))
    .map(([name]) => name)
}

// Variables whose values hold credentials, shown without them when they are not valid.
const SHOWN: Record<string, (value: string) => string> = {
  DATABASE_URL: redactDatabaseUrl,
  REDIS_URL: redactDatabaseUrl,
  OTEL_EXPORTER_OTLP_ENDPOINT: redactEndpoint,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: redactEndpoint
}

function explain (names: Iterable<string>, env: Record<string, string | undefined>): string {
  return [...new Set(names)].map((name) => {
    const schema = (Environment.properties as Record<string, TSchema>)[name]
    const value = SHOWN[name]?.(env[name] as string) ?? env[name]
    return `${name}=${JSON.stringify(value)} is not valid: expected ${schema.description}`
  }).join('; ')
}

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal'])

function isAddressOrRange (entry: string): boolean {
  const [address, prefix, ...rest] = entry.split('/')
  const family = isIP(address)
  return family !== 0 && rest.length === 0 && (prefix === undefined || (/^[0-9]{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128)))
}

// What Fastify's trustProxy accepts, checked here so that a typo fails the start, not the first request.
function parseTrustProxy (value: string | undefined): boolean | string {
  if (value === undefined || value === 'false') return false
  if (value === 'true') return true
  const entries = value.split(',').map((entry) => entry.trim())
  if (!entries.every((entry) => PROXY_NAMES.has(entry) || isAddressOrRange(entry))) {
    throw new ConfigError(`TRUST_PROXY=${JSON.stringify(value)} is not valid: expected ${TRUST_PROXY_ACCEPTS}`)
  }
  return entries.join(',')
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }
const LONGEST_DELAY = 365 * 24 * UNITS.h

// `5s`, `250ms`, `2h`: plain decimal digits, as for every number, and a unit.
function parseDelays (name: string, value: string, accepts: string, most: number): number[] {
  const delays = value.split(',').map((item) => {
    const match = /^([0-9]+)(ms|s|m|h)$/.exec(item.trim())
    return match === null ? NaN : Number(match[1]) * UNITS[match[2]]
  })
  if (delays.length > most || !delays.every((delay) => delay <= LONGEST_DELAY)) {
    throw new ConfigError(`${name}=${JSON.stringify(value)} is not valid: expected ${accepts}`)
  }
  return delays
}

// An Origin header is compared as text: an entry must be the exact text a browser sends.
function isOrigin (entry: string): boolean {
  try {
    const url = new URL(entry)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === entry
  } catch {
    return false
  }
}

function parseCorsOrigins (value: string | undefined): string[] {
  if (value === undefined) return []
  const entries = value.split(',').map((entry) => entry.trim())
  if (!(entries.length === 1 && entries[0] === '*') && !entries.every(isOrigin)) {
    throw new ConfigError(`CORS_ORIGINS=${JSON.stringify(value)} is not valid: expected ${CORS_ORIGINS_ACCEPTS}`)
  }
  return [...new Set(entries)]
}

/** Tokens shorter than this can be guessed by whoever may try often enough: warned at start. */
export const MIN_TOKEN_LENGTH = 32

interface TokenEntry {
  token: string
  /** Undefined: every scope. */
  scopes?: Scope[]
  /** Where it was given, for the messages that must never show the token. */
  where: string
}

const SCOPES_ACCEPTS = `${SCOPES.slice(0, -1).join(', ')} or ${SCOPES.at(-1) as string}`

// A line of API_TOKENS_FILE: a token alone (every scope), or followed by its scopes.
function readTokenLine (line: string, where: string): TokenEntry | undefined {
  const [token, ...scopes] = line.trim().split(/[ \t]+/)
  if (token === '' || token.startsWith('#')) return undefined
  // The word is not shown: a token with a space in it would be half shown.
  const unknown = scopes.findIndex((scope) => !isScope(scope))
  if (unknown !== -1) {
    throw new ConfigError(`${where} is not valid: word ${unknown + 1} after the token is not a scope; expected ${SCOPES_ACCEPTS}, or the token alone for every scope`)
  }
  return { token, scopes: scopes.length === 0 ? undefined : scopes as Scope[], where }
}

/** The tokens of API_TOKENS (every scope) and API_TOKENS_FILE. */
function readTokens (env: Environment): { tokens: Array<string | ScopedToken>, short: string[] } {
  const entries: TokenEntry[] = (env.API_TOKENS ?? '').split(',').map((token, i) => ({ token: token.trim(), where: `API_TOKENS entry ${i + 1}` }))
  if (env.API_TOKENS_FILE !== undefined) {
    let lines: string[]
    try {
      lines = readFileSync(env.API_TOKENS_FILE, 'utf8').split(/\r?\n/)
    } catch (error) {
      throw new ConfigError(`API_TOKENS_FILE=${JSON.stringify(env.API_TOKENS_FILE)} cannot be read: ${(error as NodeJS.ErrnoException).code}`)
    }
    for (const [i, line] of lines.entries()) {
      const entry = readTokenLine(line, `API_TOKENS_FILE line ${i + 1}`)
      if (entry !== undefined) entries.push(entry)
    }
  }
  const given = entries.filter(({ token }) => token !== '')
  const short = given.filter(({ token }) => token.length < MIN_TOKEN_LENGTH)
    .map(({ token, where }) => `the token at ${where} has ${token.length} characters: use at least ${MIN_TOKEN_LENGTH} random ones (openssl rand -hex 32)`)
  const scopesOf = new Map<string, { scopes: Scope[], where: string }>()
  for (const { token, scopes = [...SCOPES], where } of given) {
    const normal = SCOPES.filter((scope) => scopes.includes(scope))
    const first = scopesOf.get(token)
    if (first === undefined) scopesOf.set(token, { scopes: normal, where })
    else if (first.scopes.join() !== normal.join()) {
      throw new ConfigError(`${where} is not valid: it gives a token that ${first.where} gives with other scopes; give each token once, with all its scopes`)
    }
  }
  const tokens = [...scopesOf].map(([token, { scopes }]) => scopes.length === SCOPES.length ? token : { token, scopes })
  return { tokens, short }
}

/** Reads and checks the environment once, at start. Throws ConfigError. */
export function loadConfig (env: Record<string, string | undefined> = process.env): Config {
  // Empty variables count as unset, so `PORT=` in a compose file means the default.
  const data = Object.fromEntries(Object.entries({ ...DEFAULTS, ...env }).filter(([, value]) => value !== ''))
  const loose = looseNumbers(data)
  let parsed: Environment
  try {
    parsed = envSchema<Environment>({ schema: structuredClone(Environment), data, env: false })
  } catch (error) {
    const names = (error as { errors: ErrorObject[] }).errors.map((e) => e.instancePath.slice(1)).filter((name) => name !== '')
    throw new ConfigError(explain([...loose, ...names], env))
  }
  if (loose.length > 0) throw new ConfigError(explain(loose, env))

  // Node refuses to start a server whose headers may take longer than the whole request.
  if (parsed.HEADERS_TIMEOUT > parsed.REQUEST_TIMEOUT) {
    throw new ConfigError(`HEADERS_TIMEOUT=${parsed.HEADERS_TIMEOUT} is not valid: expected at most REQUEST_TIMEOUT (${parsed.REQUEST_TIMEOUT})`)
  }

  const trustProxy = parseTrustProxy(parsed.TRUST_PROXY)
  const webhookRetrySchedule = parseDelays('WEBHOOK_RETRY_SCHEDULE', parsed.WEBHOOK_RETRY_SCHEDULE, SCHEDULE_ACCEPTS, 100)
  const [webhookRetention] = parseDelays('WEBHOOK_RETENTION', parsed.WEBHOOK_RETENTION, RETENTION_ACCEPTS, 1)
  const [webhookDisableAfter] = parseDelays('WEBHOOK_DISABLE_AFTER', parsed.WEBHOOK_DISABLE_AFTER, DISABLE_AFTER_ACCEPTS, 1)
  const [eventsRetention] = parsed.EVENTS_RETENTION === '0' ? [0] : parseDelays('EVENTS_RETENTION', parsed.EVENTS_RETENTION, EVENTS_RETENTION_ACCEPTS, 1)
  const corsOrigins = parseCorsOrigins(parsed.CORS_ORIGINS)
  const { tokens, short: shortTokens } = readTokens(parsed)
  let generatedToken: string | undefined
  if (tokens.length === 0) {
    // Only a developer's machine may run on a made-up token: a typo in NODE_ENV must not.
    if (parsed.NODE_ENV !== undefined && !['development', 'test'].includes(parsed.NODE_ENV)) {
      throw new ConfigError(`API_TOKENS or API_TOKENS_FILE must name at least one token when NODE_ENV=${JSON.stringify(parsed.NODE_ENV)}: only development and test run on a generated token`)
    }
    generatedToken = randomBytes(24).toString('base64url')
    tokens.push(generatedToken)
  }

  return {
    port: parsed.PORT,
    host: parsed.HOST,
    tokens,
    shortTokens,
    generatedToken,
    databaseUrl: parsed.DATABASE_URL,
    sqliteSynchronous: parsed.SQLITE_SYNCHRONOUS,
    databasePoolSize: parsed.DATABASE_POOL_SIZE,
    databaseTimeout: parsed.DATABASE_TIMEOUT,
    databaseQueueLimit: parsed.DATABASE_QUEUE_LIMIT,
    bodyLimit: parsed.BODY_LIMIT,
    requestTimeout: parsed.REQUEST_TIMEOUT,
    headersTimeout: parsed.HEADERS_TIMEOUT,
    keepAliveTimeout: parsed.KEEP_ALIVE_TIMEOUT,
    rateLimitMax: parsed.RATE_LIMIT_MAX,
    rateLimitWindow: parsed.RATE_LIMIT_WINDOW,
    maxConnections: parsed.MAX_CONNECTIONS,
    // A quarter: it takes four addresses to hold every connection.
    maxConnectionsPerAddress: parsed.MAX_CONNECTIONS_PER_ADDRESS ?? Math.ceil(parsed.MAX_CONNECTIONS / 4),
    authFailureLimit: parsed.AUTH_FAILURE_LIMIT,
    authFailureWindow: parsed.AUTH_FAILURE_WINDOW,
    trustProxy,
    corsOrigins,
    maxEventLoopDelay: parsed.MAX_EVENT_LOOP_DELAY,
    redisUrl: parsed.REDIS_URL,
    redisKeyPrefix: parsed.REDIS_KEY_PREFIX,
    tracing: readTracing(parsed),
    metrics: parsed.METRICS === 'true',
    webhookAllowPrivate: parsed.WEBHOOK_ALLOW_PRIVATE === 'true',
    webhookRetrySchedule,
    webhookTimeout: parsed.WEBHOOK_TIMEOUT,
    webhookRetention,
    webhookDisableAfter,
    webhookEndpointLimit: parsed.WEBHOOK_ENDPOINT_LIMIT,
    eventsRetention,
    logLevel: parsed.LOG_LEVEL
  }
}
