import t from 'tap'
import { createClient, PlantStoreError } from '../../../src/client/index.js'
import { SCOPED, scopedTokensFile } from '../../helpers/scopes.js'
import { recordingFetch, startService } from '../../helpers/service.js'

t.test('a real 403: a forbidden error that names the scope, never retried', async (t) => {
  const service = await startService(t, 'sqlite', { API_TOKENS_FILE: scopedTokensFile(t) })
  const { fetch, exchanges } = recordingFetch()
  const writer = createClient({ baseUrl: service.url, token: SCOPED['plants:write'], fetch })
  const reader = createClient({ baseUrl: service.url, token: SCOPED['plants:read'], fetch })

  t.strictSame(await writer.create({ id: 1, name: 'Fern' }), { name: 'Fern' })
  t.strictSame(await reader.get(1), { name: 'Fern' })
  const before = exchanges.length
  const error = await reader.create({ id: 2, name: 'Moss' }).catch((error: unknown) => error)
  t.ok(error instanceof PlantStoreError)
  if (!(error instanceof PlantStoreError) || error.kind !== 'forbidden') throw new Error('a forbidden error was expected')
  t.equal(error.status, 403)
  t.equal(error.scope, 'plants:write')
  t.equal(error.retryAfter, undefined)
  t.equal(error.message, 'This token may not do this: the operation needs the scope plants:write, which the token does not have.')
  t.same([error.method, error.url], ['POST', `${service.url}/plants`])
  t.equal(exchanges.length - before, 1, 'one request: a 403 is not retried')

  await t.rejects(writer.webhooks.listPage(), { name: 'PlantStoreError', kind: 'forbidden', status: 403, scope: 'webhooks' })
  await t.rejects(writer.get(1), { name: 'PlantStoreError', kind: 'forbidden', scope: 'plants:read' })
  await t.rejects(reader.delete(1), { name: 'PlantStoreError', kind: 'forbidden', scope: 'plants:write' })
  t.strictSame(await reader.get(1), { name: 'Fern' }, 'the refused delete changed nothing')
  const other = await reader.get(404).catch((error: unknown) => error)
  t.match(other, { kind: 'not-found', scope: undefined }, 'only a 403 names a scope')
})
