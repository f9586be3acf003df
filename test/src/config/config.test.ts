import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { ConfigError, loadConfig } from '../../../src/config/index.js'

t.test('defaults', async (t) => {
  const config = loadConfig({ API_TOKENS: 'a' })
  t.same({ ...config, generatedToken: undefined }, {
    port: 3000,
    host: '127.0.0.1',
    tokens: ['a'],
    shortTokens: ['the token at API_TOKENS entry 1 has 1 characters: use at least 32 random ones (openssl rand -hex 32)'],
    generatedToken: undefined,
    databaseUrl: 'sqlite:./data/plants.db',
    sqliteSynchronous: 'normal',
    databasePoolSize: 10,
    databaseTimeout: 5000,
    databaseQueueLimit: 10000,
    bodyLimit: 1048576,
    requestTimeout: 30000,
    headersTimeout: 10000,
    keepAliveTimeout: 72000,
    rateLimitMax: undefined,
    rateLimitWindow: 60000,
    maxConnections: 1000,
    maxConnectionsPerAddress: 250,
    authFailureLimit: 20,
    authFailureWindow: 60000,
    trustProxy: false,
    corsOrigins: [],
    maxEventLoopDelay: 1000,
    redisUrl: undefined,
    redisKeyPrefix: 'plant-store:',
    tracing: undefined,
    metrics: true,
    webhookAllowPrivate: false,
    webhookRetrySchedule: [5000, 300000, 1800000, 7200000, 18000000, 36000000, 36000000],
    webhookTimeout: 15000,
    webhookRetention: 7 * 24 * 3600000,
    webhookDisableAfter: 5 * 24 * 3600000,
    webhookEndpointLimit: 100,
    eventsRetention: 7 * 24 * 3600000,
    logLevel: 'info'
  })
})

t.test('EVENTS_RETENTION=0 turns the change feed off', async (t) => {
  t.equal(loadConfig({ API_TOKENS: 'a', EVENTS_RETENTION: '0' }).eventsRetention, 0)
})

t.test('every variable is read', async (t) => {
  const config = loadConfig({
    PORT: '8080',
    HOST: '0.0.0.0',
    API_TOKENS: 'a',
    DATABASE_URL: 'postgresql://u@h/db',
    SQLITE_SYNCHRONOUS: 'full',
    DATABASE_POOL_SIZE: '25',
    DATABASE_TIMEOUT: '1500',
    DATABASE_QUEUE_LIMIT: '250',
    BODY_LIMIT: '2048',
    REQUEST_TIMEOUT: '20000',
    HEADERS_TIMEOUT: '5000',
    KEEP_ALIVE_TIMEOUT: '4000',
    RATE_LIMIT_MAX: '100',
    RATE_LIMIT_WINDOW: '1000',
    MAX_CONNECTIONS: '64',
    MAX_CONNECTIONS_PER_ADDRESS: '8',
    AUTH_FAILURE_LIMIT: '5',
    AUTH_FAILURE_WINDOW: '30000',
    TRUST_PROXY: 'true',
    MAX_EVENT_LOOP_DELAY: '0',
    METRICS: 'false',
    REDIS_URL: 'rediss://:pw@cache.internal:6380/2',
    REDIS_KEY_PREFIX: 'plants-eu:',
    OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.internal:4318/',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'plants-eu',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.25',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_RETRY_SCHEDULE: '50ms, 1s,2m,3h ,0s',
    WEBHOOK_TIMEOUT: '2500',
    WEBHOOK_RETENTION: '90m',
    WEBHOOK_DISABLE_AFTER: '48h',
    WEBHOOK_ENDPOINT_LIMIT: '4000',
    EVENTS_RETENTION: '36h',
    LOG_LEVEL: 'warn'
  })
  t.match(config, {
    port: 8080,
    host: '0.0.0.0',
    databaseUrl: 'postgresql://u@h/db',
    sqliteSynchronous: 'full',
    databasePoolSize: 25,
    databaseTimeout: 1500,
    databaseQueueLimit: 250,
    bodyLimit: 2048,
    requestTimeout: 20000,
    headersTimeout: 5000,
    keepAliveTimeout: 4000,
    rateLimitMax: 100,
    rateLimitWindow: 1000,
    maxConnections: 64,
    maxConnectionsPerAddress: 8,
    authFailureLimit: 5,
    authFailureWindow: 30000,
    trustProxy: true,
    maxEventLoopDelay: 0,
    redisUrl: 'rediss://:pw@cache.internal:6380/2',
    redisKeyPrefix: 'plants-eu:',
    tracing: { url: 'https://collector.internal:4318/v1/traces', protocol: 'http/json', serviceName: 'plants-eu', sampler: { name: 'parentbased_traceidratio', ratio: 0.25 } },
    metrics: false,
    webhookAllowPrivate: true,
    webhookRetrySchedule: [50, 1000, 120000, 10800000, 0],
    webhookTimeout: 2500,
    webhookRetention: 5400000,
    webhookDisableAfter: 172800000,
    eventsRetention: 36 * 3600000,
    webhookEndpointLimit: 4000,
    logLevel: 'warn'
  })
  t.equal(loadConfig({ API_TOKENS: 'a', WEBHOOK_ALLOW_PRIVATE: 'false' }).webhookAllowPrivate, false)
  t.same(loadConfig({ API_TOKENS: 'a', WEBHOOK_RETRY_SCHEDULE: '8760h' }).webhookRetrySchedule, [365 * 24 * 3600000], 'a year at most')
  t.same(loadConfig({ API_TOKENS: 'a', WEBHOOK_RETRY_SCHEDULE: Array(100).fill('1s').join(',') }).webhookRetrySchedule.length, 100)
  for (const [TRUST_PROXY, trustProxy] of [['false', false] as const, ['10.0.0.2', '10.0.0.2'], [' 172.16.0.0/12 , uniquelocal,::1/128', '172.16.0.0/12,uniquelocal,::1/128']]) {
    t.equal(loadConfig({ API_TOKENS: 'a', TRUST_PROXY }).trustProxy, trustProxy, `TRUST_PROXY=${TRUST_PROXY}`)
  }
  for (const [CORS_ORIGINS, corsOrigins] of [
    ['*', ['*']],
    ['https://app.example.com', ['https://app.example.com']],
    [' https://app.example.com , http://localhost:8080,https://app.example.com', ['https://app.example.com', 'http://localhost:8080']],
    ['http://127.0.0.1:5173,http://[::1]:5173', ['http://127.0.0.1:5173', 'http://[::1]:5173']],
    ['', []]
  ] as const) {
    t.same(loadConfig({ API_TOKENS: 'a', CORS_ORIGINS }).corsOrigins, corsOrigins, `CORS_ORIGINS=${CORS_ORIGINS}`)
  }
  t.equal(loadConfig({ API_TOKENS: 'a', PORT: '' }).port, 3000, 'an empty variable means the default')
  t.same(loadConfig({ API_TOKENS: 'a', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b/traces' }).tracing,
    { url: 'http://b/traces', protocol: 'http/protobuf', serviceName: 'plant-store', sampler: { name: 'parentbased_always_on', ratio: 1 } }, 'the traces endpoint is used as it is, every trace sampled')
})

t.test('tokens from API_TOKENS and API_TOKENS_FILE together', async (t) => {
  const file = join(t.testdir(), 'tokens')
  writeFileSync(file, 'from-file-1\n\n  from-file-2  \r\nshared\n')
  const config = loadConfig({ API_TOKENS: ' one , two,,shared', API_TOKENS_FILE: file })
  t.same(config.tokens, ['one', 'two', 'shared', 'from-file-1', 'from-file-2'])
  t.same(config.shortTokens.map((warning) => /^the token at (.+) has (\d+) characters: use at least 32 random ones/.exec(warning)?.slice(1)),
    [['API_TOKENS entry 1', '3'], ['API_TOKENS entry 2', '3'], ['API_TOKENS entry 4', '6'], ['API_TOKENS_FILE line 1', '11'], ['API_TOKENS_FILE line 3', '11'], ['API_TOKENS_FILE line 4', '6']],
    'each short token by its position, as often as it is given')
  t.notMatch(config.shortTokens.join('\n'), /\b(one|two|shared|from-file-[12])\b/, 'never the token')
  t.same(loadConfig({ API_TOKENS: 'x'.repeat(32) }).shortTokens, [], '32 characters are enough')
  t.equal(config.generatedToken, undefined)
  t.throws(() => loadConfig({ API_TOKENS_FILE: join(t.testdir(), 'missing') }),
    new ConfigError(`API_TOKENS_FILE=${JSON.stringify(join(t.testdir(), 'missing'))} cannot be read: ENOENT`))
})

t.test('API_TOKENS_FILE: a token alone has every scope; followed by scopes, only those', async (t) => {
  const file = join(t.testdir(), 'tokens')
  writeFileSync(file, [
    '# a read-only dashboard',
    'dashboard-token plants:read',
    '',
    '   # an indented comment',
    'writer-token\tplants:read  plants:write',
    'operator-token webhooks\t \tmetrics  ',
    'every-token',
    'all-listed metrics events:read webhooks plants:write plants:read',
    'dashboard-token plants:read plants:read',
    'not#a-comment',
    ''
  ].join('\r\n'))
  const config = loadConfig({ API_TOKENS: 'every-token,plain', API_TOKENS_FILE: file })
  t.same(config.tokens, [
    'every-token',
    'plain',
    { token: 'dashboard-token', scopes: ['plants:read'] },
    { token: 'writer-token', scopes: ['plants:read', 'plants:write'] },
    { token: 'operator-token', scopes: ['webhooks', 'metrics'] },
    'all-listed',
    'not#a-comment'
  ], 'each token once, in the order given; scopes in their canonical order; every scope is a plain token')
  t.same(config.shortTokens.map((warning) => /^the token at (.+?) has/.exec(warning)?.[1]), ['API_TOKENS entry 1', 'API_TOKENS entry 2',
    'API_TOKENS_FILE line 2', 'API_TOKENS_FILE line 5', 'API_TOKENS_FILE line 6', 'API_TOKENS_FILE line 7', 'API_TOKENS_FILE line 8',
    'API_TOKENS_FILE line 9', 'API_TOKENS_FILE line 10'], 'comments and blank lines are not tokens')
})

t.test('a bad tokens file stops the start naming its line, never the token', async (t) => {
  const cases: Array<[string, Record<string, string>, string]> = [
    ['secret-token-1 plants:read\nsecret-token-2 plants:admin\n', {},
      'API_TOKENS_FILE line 2 is not valid: word 1 after the token is not a scope; expected plants:read, plants:write, webhooks, metrics or events:read, or the token alone for every scope'],
    ['\n\nsecret-token-1 plants:read Plants:Write\n', {}, 'API_TOKENS_FILE line 3 is not valid: word 2 after the token is not a scope; expected'],
    // A token with a space in it: the half after the space is not shown either.
    ['secret token-1\n', {}, 'API_TOKENS_FILE line 1 is not valid: word 1 after the token is not a scope'],
    ['secret-token-1 plants:read\n#\nsecret-token-1 plants:write\n', {},
      'API_TOKENS_FILE line 3 is not valid: it gives a token that API_TOKENS_FILE line 1 gives with other scopes; give each token once, with all its scopes'],
    ['secret-token-1\nsecret-token-1 metrics\n', {}, 'API_TOKENS_FILE line 2 is not valid: it gives a token that API_TOKENS_FILE line 1 gives with other scopes'],
    ['other-token\nsecret-token-1 metrics\n', { API_TOKENS: 'x,secret-token-1' },
      'API_TOKENS_FILE line 2 is not valid: it gives a token that API_TOKENS entry 2 gives with other scopes']
  ]
  for (const [content, env, message] of cases) {
    const file = join(t.testdir(), 'tokens')
    writeFileSync(file, content)
    const error = t.throws(() => loadConfig({ ...env, API_TOKENS_FILE: file })) as Error
    t.type(error, ConfigError)
    t.equal(error.message.slice(0, message.length), message, message)
    t.notMatch(error.message, /secret|token-1|admin|Write|\n/, 'one line, without the token or the word')
  }
  const file = join(t.testdir(), 'tokens')
  writeFileSync(file, 'same-token plants:write plants:read\nsame-token plants:read plants:write\n')
  t.same(loadConfig({ API_TOKENS_FILE: file }).tokens, [{ token: 'same-token', scopes: ['plants:read', 'plants:write'] }], 'given twice with the same scopes: one token')
})

t.test('no token: one is generated only when NODE_ENV is unset, development or test', async (t) => {
  const config = loadConfig({})
  t.match(config.generatedToken, /^[A-Za-z0-9_-]{32}$/)
  t.same(config.tokens, [config.generatedToken])
  t.same(config.shortTokens, [], 'the generated token is long enough')
  t.not(loadConfig({}).generatedToken, config.generatedToken, 'a new one each start')
  for (const NODE_ENV of ['development', 'test', '']) t.match(loadConfig({ NODE_ENV }).generatedToken, /^[A-Za-z0-9_-]{32}$/, NODE_ENV)
  t.throws(() => loadConfig({ NODE_ENV: 'production' }),
    new ConfigError('API_TOKENS or API_TOKENS_FILE must name at least one token when NODE_ENV="production": only development and test run on a generated token'))
  t.throws(() => loadConfig({ NODE_ENV: 'production', API_TOKENS: ' , ' }), ConfigError)
  for (const NODE_ENV of ['prodution', 'staging', 'Development', 'test ']) {
    t.throws(() => loadConfig({ NODE_ENV }), /must name at least one token when NODE_ENV=/, NODE_ENV)
  }
  t.equal(loadConfig({ NODE_ENV: 'staging', API_TOKENS: 'a' }).generatedToken, undefined, 'any NODE_ENV runs with a token')
})

t.test('a bad value names the variable and what it accepts, in one line', async (t) => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ PORT: 'abc' }, 'PORT="abc" is not valid: expected a TCP port, an integer from 0 to 65535'],
    [{ PORT: '70000' }, 'PORT="70000" is not valid: expected a TCP port, an integer from 0 to 65535'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL="mysql://x" is not valid: expected sqlite:<path>, sqlite::memory:, postgres://… or postgresql://…'],
    [{ SQLITE_SYNCHRONOUS: 'off' }, 'SQLITE_SYNCHRONOUS="off" is not valid: expected normal or full'],
    [{ BODY_LIMIT: '0' }, 'BODY_LIMIT="0" is not valid: expected a positive integer, in bytes'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT="collector:4318" is not valid: expected an http:// or https:// URL of an OTLP/HTTP collector (unset: no tracing)'],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'grpc://c' }, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="grpc://c" is not valid: expected an http:// or https:// URL that receives the traces as it is (unset: OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces)'],
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'OTEL_EXPORTER_OTLP_PROTOCOL="grpc" is not valid: expected http/protobuf or http/json (grpc is not supported)'],
    [{ OTEL_TRACES_SAMPLER: 'jaeger_remote' }, 'OTEL_TRACES_SAMPLER="jaeger_remote" is not valid: expected parentbased_always_on, parentbased_always_off, parentbased_traceidratio, always_on, always_off, traceidratio'],
    [{ OTEL_TRACES_SAMPLER_ARG: '1.5' }, 'OTEL_TRACES_SAMPLER_ARG="1.5" is not valid: expected a ratio from 0 to 1 such as 0.25, the share of new traces the traceidratio samplers keep'],
    [{ OTEL_TRACES_SAMPLER_ARG: '1e-1' }, 'OTEL_TRACES_SAMPLER_ARG="1e-1" is not valid: expected a ratio from 0 to 1 such as 0.25, the share of new traces the traceidratio samplers keep'],
    [{ METRICS: 'yes' }, 'METRICS="yes" is not valid: expected true or false'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL="loud" is not valid: expected one of fatal, error, warn, info, debug, trace, silent'],
    [{ DATABASE_POOL_SIZE: '0' }, 'DATABASE_POOL_SIZE="0" is not valid: expected an integer from 1 to 1000'],
    [{ DATABASE_TIMEOUT: '5s' }, 'DATABASE_TIMEOUT="5s" is not valid: expected milliseconds, an integer from 100 to 600000'],
    [{ DATABASE_QUEUE_LIMIT: '0' }, 'DATABASE_QUEUE_LIMIT="0" is not valid: expected an integer from 1 to 1000000'],
    [{ REQUEST_TIMEOUT: '0' }, 'REQUEST_TIMEOUT="0" is not valid: expected milliseconds, an integer from 100 to 3600000'],
    [{ HEADERS_TIMEOUT: '10s' }, 'HEADERS_TIMEOUT="10s" is not valid: expected milliseconds, an integer from 100 to 3600000, at most REQUEST_TIMEOUT'],
    [{ HEADERS_TIMEOUT: '40000' }, 'HEADERS_TIMEOUT=40000 is not valid: expected at most REQUEST_TIMEOUT (30000)'],
    [{ KEEP_ALIVE_TIMEOUT: '-1' }, 'KEEP_ALIVE_TIMEOUT="-1" is not valid: expected milliseconds, an integer from 100 to 3600000'],
    [{ RATE_LIMIT_MAX: '0' }, 'RATE_LIMIT_MAX="0" is not valid: expected an integer from 1 to 1000000000 (unset: no rate limit)'],
    [{ RATE_LIMIT_WINDOW: '1 minute' }, 'RATE_LIMIT_WINDOW="1 minute" is not valid: expected milliseconds, an integer from 1000 to 86400000'],
    [{ MAX_CONNECTIONS: '0' }, 'MAX_CONNECTIONS="0" is not valid: expected an integer from 1 to 1000000'],
    [{ MAX_CONNECTIONS_PER_ADDRESS: '0' }, 'MAX_CONNECTIONS_PER_ADDRESS="0" is not valid: expected an integer from 1 to 1000000 (unset: a quarter of MAX_CONNECTIONS)'],
    [{ AUTH_FAILURE_LIMIT: '0' }, 'AUTH_FAILURE_LIMIT="0" is not valid: expected an integer from 1 to 1000000000'],
    [{ AUTH_FAILURE_WINDOW: '1m' }, 'AUTH_FAILURE_WINDOW="1m" is not valid: expected milliseconds, an integer from 1000 to 86400000'],
    ...['1', 'yes', '10.0.0.0/33', '10.0.0.1/8/2', 'localhost', '10.0.0.1,', '::1/129', '10.0.0.0/+8'].map((value): [Record<string, string>, string] =>
      [{ TRUST_PROXY: value }, `TRUST_PROXY=${JSON.stringify(value)} is not valid: expected true, false, or comma-separated proxy addresses, CIDR ranges, loopback, linklocal or uniquelocal`]),
    ...['yes', '1', 'TRUE', 'on'].map((value): [Record<string, string>, string] =>
      [{ WEBHOOK_ALLOW_PRIVATE: value }, `WEBHOOK_ALLOW_PRIVATE=${JSON.stringify(value)} is not valid: expected true or false`]),
    ...['5', '5 s', '5sec', '1.5s', '0x10s', '1e3ms', '-5s', '+5s', '5s,', ',5s', '5s,,5m', '5d', '5S', '8761h', Array(101).fill('1s').join(',')]
      .map((value): [Record<string, string>, string] => [{ WEBHOOK_RETRY_SCHEDULE: value },
        `WEBHOOK_RETRY_SCHEDULE=${JSON.stringify(value)} is not valid: expected comma-separated delays, each plain decimal digits and a unit (ms, s, m or h), such as 5s,5m,30m, at most 100 of them`]),
    [{ WEBHOOK_TIMEOUT: '15s' }, 'WEBHOOK_TIMEOUT="15s" is not valid: expected milliseconds, an integer from 100 to 600000'],
    [{ WEBHOOK_TIMEOUT: '99' }, 'WEBHOOK_TIMEOUT="99" is not valid: expected milliseconds, an integer from 100 to 600000'],
    [{ WEBHOOK_ENDPOINT_LIMIT: '0' }, 'WEBHOOK_ENDPOINT_LIMIT="0" is not valid: expected an integer from 1 to 100000'],
    [{ WEBHOOK_ENDPOINT_LIMIT: '100001' }, 'WEBHOOK_ENDPOINT_LIMIT="100001" is not valid: expected an integer from 1 to 100000'],
    [{ WEBHOOK_ENDPOINT_LIMIT: '1e3' }, 'WEBHOOK_ENDPOINT_LIMIT="1e3" is not valid: expected an integer from 1 to 100000'],
    ...['7d', '1h,2h', '168'].map((value): [Record<string, string>, string] =>
      [{ WEBHOOK_RETENTION: value }, `WEBHOOK_RETENTION=${JSON.stringify(value)} is not valid: expected a delay of plain decimal digits and a unit (ms, s, m or h), such as 168h`]),
    ...['5d', '120'].map((value): [Record<string, string>, string] =>
      [{ WEBHOOK_DISABLE_AFTER: value }, `WEBHOOK_DISABLE_AFTER=${JSON.stringify(value)} is not valid: expected a delay of plain decimal digits and a unit (ms, s, m or h), such as 120h`]),
    ...['7d', '1h,2h', '168', '-1'].map((value): [Record<string, string>, string] =>
      [{ EVENTS_RETENTION: value }, `EVENTS_RETENTION=${JSON.stringify(value)} is not valid: expected 0 (the change feed off) or a delay of plain decimal digits and a unit (ms, s, m or h), such as 168h`]),
    // Not what a browser sends in Origin: a path or trailing slash, a default port, capitals, no scheme, another scheme, * among others.
    ...['https://app.example.com/', 'https://app.example.com/app', 'https://app.example.com:443', 'http://App.example.com', 'app.example.com',
      'ftp://app.example.com', 'https://user@app.example.com', 'https://app.example.com?x', 'null', '*,https://app.example.com', 'https://app.example.com,',
      '**', 'https://'].map((value): [Record<string, string>, string] =>
      [{ CORS_ORIGINS: value }, `CORS_ORIGINS=${JSON.stringify(value)} is not valid: expected * or comma-separated origins, each http(s)://host[:port] exactly as a browser sends it (no path, no trailing slash, no default port)`]),
    [{ MAX_EVENT_LOOP_DELAY: '-5' }, 'MAX_EVENT_LOOP_DELAY="-5" is not valid: expected milliseconds, an integer from 0 (no load shedding) to 60000']
  ]
  for (const [env, message] of cases) {
    t.throws(() => loadConfig({ API_TOKENS: 'a', ...env }), new ConfigError(message), message)
  }
  for (const PORT of ['0x10', '1e3', ' 5', '5 ', '+5', '-0', '5.0', '０']) {
    t.throws(() => loadConfig({ API_TOKENS: 'a', PORT }),
      new ConfigError(`PORT=${JSON.stringify(PORT)} is not valid: expected a TCP port, an integer from 0 to 65535`), `PORT=${PORT}`)
  }
  t.throws(() => loadConfig({ API_TOKENS: 'a', BODY_LIMIT: '1e3', PORT: 'x' }), /^PORT="x" is not valid: .+; BODY_LIMIT="1e3" is not valid: [^;]+$/)
  t.throws(() => loadConfig({ API_TOKENS: 'a', RATE_LIMIT_MAX: '0x10' }), /^RATE_LIMIT_MAX="0x10" is not valid/)
  t.equal(loadConfig({ API_TOKENS: 'a', PORT: '08080' }).port, 8080, 'leading zeros are still decimal digits')
  for (const DATABASE_URL of ['mysql://admin:hunter2@db/plants', 'postgres:/admin:hunter2@db', ' postgresql://admin:hunter2@db', 'postgres//admin:hunter2@db?password=hunter2']) {
    const error = t.throws(() => loadConfig({ API_TOKENS: 'a', DATABASE_URL })) as Error
    t.match(error.message, /^DATABASE_URL=".*\[REDACTED\].*" is not valid: expected sqlite:<path>/, DATABASE_URL)
    t.notMatch(error.message, 'hunter2', 'no password')
  }
  for (const REDIS_URL of ['http://:hunter2@cache:6379', 'redis//user:hunter2@cache', 'redis://:hunter2@ cache', 'redis://']) {
    const error = t.throws(() => loadConfig({ API_TOKENS: 'a', REDIS_URL })) as Error
    t.match(error.message, /^REDIS_URL=".*" is not valid: expected redis:\/\/\[\[user\]:password@\]host\[:port\]\[\/db\] or rediss:\/\/…/, REDIS_URL)
    t.notMatch(error.message, 'hunter2', 'no password')
  }
  // A collector's endpoint: its user info is a credential as a whole (a user and a token, or a token alone).
  for (const [name, value] of [
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'http://user:hunter2@collector :4318'],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'user:hunter2@collector:4318'],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'grpc://hunter2@collector'],
    ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'https://user:hunter2@collector/v1/traces?api_key=hunter2 '],
    ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'https://user:hun ter2@collector/v1/traces']
  ]) {
    const error = t.throws(() => loadConfig({ API_TOKENS: 'a', [name]: value })) as Error
    t.match(error.message, new RegExp(`^${name}=".*\\[REDACTED\\].*" is not valid: expected an http:// or https:// URL`), value)
    t.notMatch(error.message, /hunter2|hun ter2|user/, 'no credential')
  }
  t.throws(() => loadConfig({ API_TOKENS: 'a', REDIS_KEY_PREFIX: 'x'.repeat(201) }), /^REDIS_KEY_PREFIX="x+" is not valid: expected a non-empty prefix/)
  const both = t.throws(() => loadConfig({ API_TOKENS: 'a', PORT: 'x', BODY_LIMIT: 'y' })) as Error
  t.notMatch(both.message, /\n/, 'one line')
})
