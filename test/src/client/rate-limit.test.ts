import t from 'tap'
import { createClient, PlantStoreError } from '../../../src/client/index.js'
import { recordingFetch, startService, TOKEN } from '../../helpers/service.js'

t.test('a real 429: the client waits as long as Retry-After says, then goes on', async (t) => {
  // Three requests per three seconds, per token: the fourth is refused with Retry-After.
  const service = await startService(t, 'sqlite', { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW: '3000' })
  const { fetch, exchanges } = recordingFetch()
  const client = createClient({ baseUrl: service.url, token: TOKEN, fetch, retries: { max: 5 } })

  for (let id = 1; id <= 7; id++) t.strictSame(await client.create({ id, name: `p${id}` }), { name: `p${id}` })
  const limited = exchanges.flatMap((exchange, i) => exchange.status === 429 ? [[exchange, exchanges[i + 1]]] : [])
  t.ok(limited.length >= 1, `${limited.length} answers were 429`)
  for (const [refused, retry] of limited) {
    t.match(refused.retryAfter, /^[1-3]$/, 'Retry-After in seconds')
    const waited = retry.sent - (refused.answered as number)
    t.ok(waited >= Number(refused.retryAfter) * 1000 - 2, `waited ${Math.round(waited)} ms for Retry-After: ${refused.retryAfter}`)
    t.equal(retry.url, refused.url, 'then sent the same request again')
  }
  t.equal(exchanges.filter((exchange) => exchange.status === 200).length, 7, 'every plant created once the window passed')

  // A caller who will not wait that long gets the 429 at once, with how long to wait.
  const hasty = createClient({ baseUrl: service.url, token: TOKEN, retries: { maxRetryAfter: 500 } })
  let error: unknown
  for (let n = 0; error === undefined && n < 10; n++) error = await hasty.get(1).then(() => undefined, (e: unknown) => e)
  t.ok(error instanceof PlantStoreError)
  if (!(error instanceof PlantStoreError) || error.kind !== 'rate-limited') throw new Error('a 429 was expected')
  t.equal(error.status, 429)
  t.ok([1000, 2000, 3000].includes(error.retryAfter as number), `retryAfter ${error.retryAfter} ms`)
  t.match(error.message, /^Too many requests with this token: the limit is 3 per 3 s/)
})
