import t from 'tap'
import { assertError, AUTH, build, getPlant } from '../helpers/build.js'

const WRONG = { authorization: 'Bearer a-guessed-token' }

t.test('AUTH_FAILURE_LIMIT failures from an address: its next requests get a 429, even with a good token', async (t) => {
  const app = await build(t, { AUTH_FAILURE_LIMIT: '3', AUTH_FAILURE_WINDOW: '2000' })
  // Successes are not counted: however many, they leave the budget of failures whole.
  for (let i = 0; i < 50; i++) t.equal((await getPlant(app, 1)).statusCode, 404)
  for (let i = 0; i < 3; i++) assertError(t, await getPlant(app, 1, i === 1 ? {} : WRONG), 401)

  const refused = await getPlant(app, 1)
  assertError(t, refused, 429, /^Too many failed authentications from this address: retry in [12] s\.$/)
  t.match(refused.headers['retry-after'], /^[12]$/)
  t.equal(refused.headers.connection, 'close')
  t.equal(refused.headers['www-authenticate'], undefined, 'the token was not even looked at')
  assertError(t, await getPlant(app, 1, WRONG), 429)

  t.equal((await app.inject({ url: '/plants/1', headers: AUTH, remoteAddress: '192.0.2.1' })).statusCode, 404, 'another address is served')
  for (const url of ['/health', '/ready', '/openapi.json']) t.equal((await app.inject(url)).statusCode, 200, `${url} is outside the limit`)

  await new Promise((resolve) => setTimeout(resolve, 2100))
  t.equal((await getPlant(app, 1)).statusCode, 404, 'a new window: served again')
})

t.test('behind a trusted proxy the address is the one X-Forwarded-For names; otherwise the header is ignored', async (t) => {
  const guess = (app: Awaited<ReturnType<typeof build>>, client: string, headers = WRONG) =>
    app.inject({ url: '/plants/1', headers: { ...headers, 'x-forwarded-for': client }, remoteAddress: '10.0.0.2' })

  const proxied = await build(t, { AUTH_FAILURE_LIMIT: '2', TRUST_PROXY: '10.0.0.0/8' })
  for (let i = 0; i < 2; i++) assertError(t, await guess(proxied, '203.0.113.7'), 401)
  assertError(t, await guess(proxied, '203.0.113.7', AUTH), 429)
  t.equal((await guess(proxied, '198.51.100.9', AUTH)).statusCode, 404, 'another client behind the same proxy is served')
  // A client cannot escape by prepending addresses of its own: the proxy appends the real one.
  assertError(t, await guess(proxied, '192.0.2.55, 203.0.113.7', AUTH), 429)

  const direct = await build(t, { AUTH_FAILURE_LIMIT: '2' })
  assertError(t, await guess(direct, '203.0.113.1'), 401)
  assertError(t, await guess(direct, '203.0.113.2'), 401)
  assertError(t, await guess(direct, '203.0.113.3', AUTH), 429, /failed authentications/)
})
