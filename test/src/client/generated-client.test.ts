import createFetchClient from 'openapi-fetch'
import openapiTS, { astToString } from 'openapi-typescript'
import t from 'tap'
import { createClient } from '../../../src/client/index.js'
import { AUTH, build, TOKEN } from '../../helpers/build.js'

// docs/client.md's comparison, measured: what a client generated from this service's
// /openapi.json with openapi-typescript, called with openapi-fetch, does with ids
// above 2^53, next to plant-store/client on the same service.

const ODD = 9007199254740993n // 2^53 + 1: no double holds it
const EVEN = 9007199254740992n // 2^53: the double that 2^53 + 1 rounds to

t.test('a generated client loses ids above 2^53 without an error; plant-store/client keeps them', async (t) => {
  const app = await build(t)
  const baseUrl = await app.listen({ port: 0, host: '127.0.0.1' })

  const document = (await app.inject({ url: '/openapi.json' })).json()
  const types = astToString(await openapiTS(document))
  t.match(types, /NewPlant: {[^}]*?\bid: number;/, 'openapi-typescript types the int64 id as number')
  t.match(types, /PlantListItem: {[^}]*?\bid: number;/)

  const generated = createFetchClient<any>({ baseUrl, headers: AUTH })
  const ours = createClient({ baseUrl, token: TOKEN })

  // The literal is rounded before any code runs: the request says 9007199254740992.
  // eslint-disable-next-line @typescript-eslint/no-loss-of-precision -- the rounding is the point
  const created = await generated.POST('/plants', { body: { id: 9007199254740993, name: 'Odd' } })
  t.equal(created.response.status, 200, 'answered 200: nothing says anything went wrong')
  t.strictSame(await ours.get(EVEN), { name: 'Odd' }, 'the plant was stored under 2^53')
  await t.rejects(ours.get(ODD), { name: 'PlantStoreError', kind: 'not-found' }, 'and there is no plant 2^53 + 1')
  await t.rejects(generated.POST('/plants', { body: { id: ODD, name: 'Odd' } }), TypeError, 'a bigint body throws in JSON.stringify')

  t.strictSame(await ours.create({ id: ODD, name: 'Real' }), { name: 'Real' })
  // eslint-disable-next-line @typescript-eslint/no-loss-of-precision -- the rounding is the point
  const read = await generated.GET('/plants/{id}', { params: { path: { id: 9007199254740993 } } })
  t.strictSame(read.data, { name: 'Odd' }, 'reading 2^53 + 1 reads the other plant')

  const listed = await generated.GET('/plants', {})
  t.strictSame(listed.data, [{ id: Number(EVEN), name: 'Odd' }, { id: Number(EVEN), name: 'Real' }], 'two plants listed with one id')
  const real = (listed.data as Array<{ id: number, name: string }>)[1]
  await generated.DELETE('/plants/{id}', { params: { path: { id: real.id } } })
  t.strictSame(await ours.get(ODD), { name: 'Real' }, 'deleting "Real" by its listed id deleted "Odd" instead')
  await t.rejects(ours.get(EVEN), { name: 'PlantStoreError', kind: 'not-found' })

  const exact: bigint[] = []
  for await (const plant of ours.list()) exact.push(plant.id)
  t.strictSame(exact, [ODD], 'plant-store/client lists the id as it is')
})
