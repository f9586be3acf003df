import t from 'tap'
import { backoff, retryAfter, retryPolicy, sleep } from '../../../src/client/retry.js'

t.test('the policy: defaults, a number of retries, or fields; nonsense refused', async (t) => {
  t.strictSame(retryPolicy(undefined), { max: 3, baseDelay: 100, maxDelay: 5000, maxRetryAfter: 60_000 })
  t.strictSame(retryPolicy(0), { max: 0, baseDelay: 100, maxDelay: 5000, maxRetryAfter: 60_000 })
  t.strictSame(retryPolicy({ baseDelay: 10, maxRetryAfter: 0 }), { max: 3, baseDelay: 10, maxDelay: 5000, maxRetryAfter: 0 })
  for (const bad of [-1, 1.5, Number.NaN, Infinity]) t.throws(() => retryPolicy(bad), /retries.max must be a whole number, 0 or more/)
  t.throws(() => retryPolicy({ maxDelay: '5' as unknown as number }), /retries.maxDelay/)
})

t.test('backoff: full jitter under a ceiling that doubles, capped', async (t) => {
  const policy = retryPolicy({ baseDelay: 100, maxDelay: 1000 })
  for (let attempt = 0; attempt < 8; attempt++) {
    const ceiling = Math.min(1000, 100 * 2 ** attempt)
    const waits = Array.from({ length: 200 }, () => backoff(policy, attempt))
    t.ok(waits.every((wait) => wait >= 0 && wait < ceiling), `attempt ${attempt}: below ${ceiling} ms`)
    t.ok(Math.max(...waits) > ceiling / 2, 'and spread over the range')
  }
})

t.test('Retry-After: seconds or an HTTP date, in milliseconds', async (t) => {
  t.equal(retryAfter(null), undefined)
  t.equal(retryAfter('0'), 0)
  t.equal(retryAfter('120'), 120_000)
  t.equal(retryAfter(' 7 '), 7000)
  const inTen = new Date(Math.floor(Date.now() / 1000) * 1000 + 10_000).toUTCString()
  const wait = retryAfter(inTen) as number
  t.ok(wait > 9000 && wait <= 10_000, `${inTen}: ${wait} ms`)
  t.equal(retryAfter('Sun, 06 Nov 1994 08:49:37 GMT'), 0, 'a date gone by: no wait')
  for (const unreadable of ['', '1.5', '-1', 'soon', 'Sun, 06 Nov 1994 08:49:37', 'Xxx, 99 Zzz 1994 08:49:37 GMT']) {
    t.equal(retryAfter(unreadable), undefined, JSON.stringify(unreadable))
  }
})

t.test('sleep: waits, or ends with the signal', async (t) => {
  const started = performance.now()
  await sleep(50, undefined)
  t.ok(performance.now() - started >= 45)
  await t.rejects(sleep(10, AbortSignal.abort(new Error('before'))), { message: 'before' })
  const controller = new AbortController()
  setTimeout(() => controller.abort(new Error('during')), 20)
  await t.rejects(sleep(60_000, controller.signal), { message: 'during' })
  const kept = new AbortController()
  await sleep(1, kept.signal)
  kept.abort()
  t.pass('an abort after the wait changes nothing')
})
