import { createHash } from 'node:crypto'
import Fastify from 'fastify'
import t, { type Test } from 'tap'
import { buildApp } from '../../../src/app.js'
import { loadConfig } from '../../../src/config/index.js'
import { RequestLog, serializeRequest } from '../../../src/http/request-log.js'
import { serverOptions } from '../../../src/http/server-options.js'
import { AUTH, TOKEN } from '../../helpers/build.js'
import { bearer, SCOPED, scopedTokensFile } from '../../helpers/scopes.js'

interface Line { level: number, msg: string, reqId?: string, [key: string]: unknown }

/** The app as the server builds it, its log lines captured at the most verbose level. */
async function logged (t: Test, env: Record<string, string> = {}) {
  const lines: string[] = []
  const config = loadConfig({ API_TOKENS: `${TOKEN},second-token`, LOG_LEVEL: 'trace', DATABASE_URL: 'sqlite::memory:', ...env })
  const app = await buildApp(config, { logStream: { write: (line) => { lines.push(line) } } })
  t.teardown(() => app.close())
  await app.ready()
  const parsed = (): Line[] => lines.map((line) => JSON.parse(line))
  return { app, lines, parsed }
}

function keys (value: unknown): string[] {
  if (value === null || typeof value !== 'object') return []
  return Object.entries(value).flatMap(([key, inner]) => [key.toLowerCase(), ...keys(inner)])
}

t.test('no log line holds the Authorization header or a token, whatever happens', async (t) => {
  const { app, lines, parsed } = await logged(t)
  const json = { 'content-type': 'application/json' }
  const wrong = 'wrong-token-0123456789'
  const requests = [
    { method: 'POST' as const, url: '/plants', headers: { ...AUTH, ...json }, payload: '{"id":1,"name":"Fern"}' },
    { method: 'POST' as const, url: '/plants', headers: { ...AUTH, ...json }, payload: '{"id":1,"name":"Other"}' },
    { method: 'POST' as const, url: '/plants', headers: { ...AUTH, ...json }, payload: '{"id":"x"}' },
    { method: 'POST' as const, url: '/plants', headers: { ...AUTH, ...json }, payload: '{not json' },
    { method: 'GET' as const, url: '/plants/1', headers: { authorization: 'Bearer second-token' } },
    { method: 'GET' as const, url: '/plants/2', headers: AUTH },
    { method: 'GET' as const, url: '/plants/1', headers: { authorization: `Bearer ${wrong}` } },
    { method: 'GET' as const, url: '/plants/1', headers: { authorization: `Basic ${TOKEN}` } },
    { method: 'GET' as const, url: '/plants/1', headers: { authorization: TOKEN } },
    { method: 'GET' as const, url: '/plants/%E0%A4%A', headers: AUTH },
    { method: 'GET' as const, url: '/nowhere', headers: AUTH },
    { method: 'GET' as const, url: '/ready', headers: AUTH }
  ]
  for (const request of requests) await app.inject(request)

  t.ok(lines.length > requests.length, 'the requests were logged')
  for (const line of lines) {
    for (const secret of [TOKEN, 'second-token', wrong]) t.notMatch(line, secret, 'no token')
    t.notOk(keys(JSON.parse(line)).some((key) => key === 'authorization' || key === 'headers'), 'no header')
  }
  t.ok(parsed().some((line) => line.level === 10 || line.level === 20), 'trace and debug lines were captured too')
})

t.test('each request\'s line names its token by the fingerprint of its digest, never the token or its whole digest', async (t) => {
  const { app, lines, parsed } = await logged(t, { LOG_LEVEL: 'info', API_TOKENS: '', API_TOKENS_FILE: scopedTokensFile(t, `${TOKEN}\n`) })
  const digest = (token: string) => createHash('sha256').update(token).digest('hex')
  await app.inject({ url: '/plants/1', headers: AUTH })
  await app.inject({ url: '/plants/1', headers: bearer('plants:read') })
  await app.inject({ method: 'DELETE', url: '/plants/1', headers: bearer('plants:read') })
  await app.inject({ url: '/plants/1', headers: { authorization: 'Bearer wrong-token' } })
  t.same(parsed().map((line) => [(line.res as { statusCode: number }).statusCode, (line.req as { token?: string }).token]), [
    [404, digest(TOKEN).slice(0, 12)],
    [404, digest(SCOPED['plants:read']).slice(0, 12)],
    [403, digest(SCOPED['plants:read']).slice(0, 12)],
    [401, undefined]
  ], 'the token that authenticated the request, refused or not; none when none did')
  for (const line of lines) {
    for (const token of [TOKEN, SCOPED['plants:read'], 'wrong-token']) {
      t.notMatch(line, token, 'never the token')
      t.notMatch(line, digest(token), 'never its whole digest')
    }
  }
})

t.test('a token in the query string never reaches the log, nor a 404 message', async (t) => {
  const { app, lines, parsed } = await logged(t, { LOG_LEVEL: 'info' })
  const guess = 'guessed-secret-4242'
  const urls = [
    `/plants/1?access_token=${TOKEN}`,
    `/plants/1?Access_Token=${guess}&x=1`,
    `/nowhere?api_key=${guess}`,
    `/plants/%E0%A4%A?token=${guess}`,
    `/plants/1?password=${guess}`
  ]
  for (const url of urls) {
    const res = await app.inject({ url, headers: AUTH })
    t.notMatch(res.body, guess, `${url}: not echoed`)
  }
  t.equal(parsed().filter((line) => line.msg === 'request completed' || line.msg === 'request rejected').length, urls.length)
  t.match(parsed().find((line) => (line.req as { url: string } | undefined)?.url.startsWith('/plants/1?Access_Token=')),
    { req: { url: '/plants/1?Access_Token=[REDACTED]&x=1' } })
  for (const line of lines) {
    t.notMatch(line, guess, 'no guessed token')
    t.notMatch(line, TOKEN, 'no configured token')
  }
})

t.test('one line per request, with its request id, method, URL, status and time', async (t) => {
  const { app, parsed } = await logged(t, { LOG_LEVEL: 'info' })
  const answers = [
    await app.inject({ method: 'GET', url: '/plants/7', headers: AUTH }),
    await app.inject({ method: 'GET', url: '/plants/7' }),
    await app.inject({ method: 'DELETE', url: '/plants/7', headers: AUTH }),
    await app.inject({ method: 'GET', url: '/plants/%E0%A4%A', headers: AUTH }),
    await app.inject({ method: 'GET', url: '/openapi.json', headers: { 'x-request-id': 'client-chosen-1' } })
  ]
  for (const answer of answers) {
    const id = answer.headers['x-request-id']
    const own = parsed().filter((line) => line.reqId === id)
    t.equal(own.length, 1, `one line for ${id}`)
    t.match(own[0], { level: 30, req: { method: String, url: String }, res: { statusCode: answer.statusCode } })
  }
  t.match(parsed().find((line) => line.reqId === 'client-chosen-1'), {
    msg: 'request completed', req: { method: 'GET', url: '/openapi.json' }, res: { statusCode: 200 }, responseTime: Number
  })
  t.match(parsed().find((line) => line.reqId === answers[3].headers['x-request-id']), {
    msg: 'request rejected', res: { statusCode: 400 }, reason: /URL is malformed/
  }, 'an error raised before routing has its line too')
})

t.test('/health and /ready write no line at info level', async (t) => {
  const { app, parsed } = await logged(t, { LOG_LEVEL: 'info' })
  const before = parsed().length
  for (const url of ['/health', '/ready', '/health']) t.equal((await app.inject(url)).statusCode, 200)
  t.equal(parsed().length, before)
  await app.inject({ url: '/plants/1', headers: AUTH })
  t.equal(parsed().length, before + 1, 'other requests are logged')
})

t.test('a request whose response fails is logged as an error, with it', async (t) => {
  const lines: string[] = []
  const app = Fastify({ logger: { stream: { write: (line: string) => { lines.push(line) } } }, logController: new RequestLog() })
  t.teardown(() => app.close())
  app.addHook('onResponse', async () => { throw new Error('after the response') })
  app.get('/', async () => 'hi')
  t.equal((await app.inject('/')).statusCode, 200)
  t.equal(lines.length, 1)
  t.match(JSON.parse(lines[0]), { level: 50, msg: 'request errored', err: { message: 'after the response' }, res: { statusCode: 200 } })
})

t.test('the line is pino\'s own: the logger\'s redaction, formatters and serializers apply to it', async (t) => {
  const lines: string[] = []
  const app = Fastify({
    logger: {
      stream: { write: (line: string) => { lines.push(line) } },
      serializers: { req: serializeRequest },
      redact: ['req.remoteAddress', 'req.host'],
      formatters: { level: (label) => ({ level: label }) }
    },
    logController: new RequestLog()
  })
  t.teardown(() => app.close())
  app.get('/', async () => 'hi')
  t.equal((await app.inject('/?token=secret')).statusCode, 200)
  t.equal(lines.length, 1)
  t.match(JSON.parse(lines[0]), {
    level: 'info',
    msg: 'request completed',
    req: { method: 'GET', url: '/?token=[REDACTED]', host: '[Redacted]', remoteAddress: '[Redacted]' },
    res: { statusCode: 200 },
    responseTime: Number
  })
})

t.test('the service\'s line: its request id, the redacted URL, the host and the token\'s fingerprint, and none below the level', async (t) => {
  const config = loadConfig({ API_TOKENS: TOKEN, LOG_LEVEL: 'info', DATABASE_URL: 'sqlite::memory:' })
  const linesAt = async (level: typeof config.logLevel): Promise<string[]> => {
    const lines: string[] = []
    const app = Fastify(serverOptions({ ...config, logLevel: level }, { write: (line) => { lines.push(line) } }))
    t.teardown(() => app.close())
    app.addHook('onRequest', async (request) => { request.tokenFingerprint = 'abcdef012345' })
    app.get('/*', async () => 'hi')
    const answer = await app.inject({ url: '/a"\\é?token=secret&b=1', headers: { host: 'ho"st', 'x-request-id': 'the-id' } })
    t.equal(answer.statusCode, 200)
    return lines
  }
  const lines = await linesAt('info')
  t.equal(lines.length, 1)
  t.match(JSON.parse(lines[0]), { level: 30, msg: 'request completed', reqId: 'the-id', req: { url: '/a%22/%C3%A9?token=[REDACTED]&b=1', host: 'ho"st', token: 'abcdef012345' }, res: { statusCode: 200 } })
  t.same(await linesAt('warn'), [], 'no line below the logger\'s level')
})
