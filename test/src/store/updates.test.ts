import t, { type Test } from 'tap'
import { plantEtag } from '../../../src/store/etag.js'
import { openStore } from '../../../src/store/index.js'
import type { PlantStore } from '../../../src/store/types.js'
import { forEachStore, rawSql } from '../../helpers/stores.js'

forEachStore(t, (t, _build, databaseUrl) => {
  async function open (t: Test): Promise<{ store: PlantStore, url: string }> {
    const url = await databaseUrl(t)
    const store = await openStore({ databaseUrl: url, sqliteSynchronous: 'normal', databasePoolSize: 4, databaseTimeout: 5000 })
    t.teardown(() => store.close())
    return { store, url }
  }

  t.test('a change merges into the plant: name set, tag set, tag removed, fields left out kept', async (t) => {
    const { store } = await open(t)
    await store.create({ id: 1n, name: 'Fern', tag: 'shade' })
    t.same(await store.update(1n, { name: 'Palm' }), { outcome: 'updated', plant: { name: 'Palm', tag: 'shade' } })
    t.same(await store.update(1n, { tag: 'sun' }), { outcome: 'updated', plant: { name: 'Palm', tag: 'sun' } })
    t.same(await store.update(1n, { tag: null }), { outcome: 'updated', plant: { name: 'Palm' } })
    t.same(await store.update(1n, { tag: '' }), { outcome: 'updated', plant: { name: 'Palm', tag: '' } }, 'an empty tag is a tag')
    t.same(await store.update(1n, { name: 'Fern', tag: 'shade' }), { outcome: 'updated', plant: { name: 'Fern', tag: 'shade' } })
    t.same(await store.get(1n), { name: 'Fern', tag: 'shade' })
    t.same(await store.list({ limit: 5, tag: 'shade' }), [{ id: 1n, name: 'Fern', tag: 'shade' }], 'the tag index follows')
    t.equal(await store.update(2n, { name: 'Nobody' }), undefined, 'no plant: undefined')
    t.equal(await store.get(2n), undefined, 'and nothing is created')
  })

  t.test('a change that changes nothing writes nothing', async (t) => {
    const { store, url } = await open(t)
    const sql = await rawSql(t, url)
    const sqlite = url.startsWith('sqlite:')
    // SQLite: a trigger counts the rows rewritten; PostgreSQL: a rewritten row is a new version (xmin).
    if (sqlite) {
      await sql('CREATE TABLE rewrites (id INTEGER)')
      await sql('CREATE TRIGGER count_rewrites AFTER UPDATE ON plants BEGIN INSERT INTO rewrites VALUES (new.id); END')
    }
    const version = async () => sqlite ? (await sql('SELECT count(*) AS n FROM rewrites'))[0].n : (await sql('SELECT xmin::text AS v FROM plants WHERE id = 7'))[0].v
    await store.create({ id: 7n, name: 'Ivy', tag: 'climber' })
    const before = await version()
    for (const change of [{}, { name: 'Ivy' }, { tag: 'climber' }, { name: 'Ivy', tag: 'climber' }]) {
      t.same(await store.update(7n, change), { outcome: 'unchanged', plant: { name: 'Ivy', tag: 'climber' } }, JSON.stringify(change))
    }
    await store.create({ id: 8n, name: 'Moss' })
    t.same(await store.update(8n, { tag: null }), { outcome: 'unchanged', plant: { name: 'Moss' } }, 'removing a tag it does not have')
    t.same(await version(), before, 'no row was rewritten')
    t.same(await store.update(7n, { tag: 'vine' }), { outcome: 'updated', plant: { name: 'Ivy', tag: 'vine' } })
    t.not(await version(), before, 'a real change is (the check can see one)')
  })

  t.test('ifMatch: the change or delete is made only when the current ETag is among the tags', async (t) => {
    const { store } = await open(t)
    await store.create({ id: 3n, name: 'Rose', tag: 'red' })
    const current = plantEtag({ name: 'Rose', tag: 'red' })
    const stale = plantEtag({ name: 'Rose' })
    t.equal(await store.update(3n, { name: 'Tulip' }, { ifMatch: [stale] }), undefined)
    t.equal(await store.update(3n, { name: 'Tulip' }, { ifMatch: [] }), undefined, 'an empty list matches nothing')
    t.equal(await store.update(3n, { name: 'Tulip' }, { ifMatch: ['not one of ours', `${current} x`] }), undefined)
    t.equal(await store.delete(3n, { ifMatch: [stale] }), false)
    t.same(await store.get(3n), { name: 'Rose', tag: 'red' }, 'nothing changed')
    t.same(await store.update(3n, {}, { ifMatch: [current] }), { outcome: 'unchanged', plant: { name: 'Rose', tag: 'red' } })
    t.same(await store.update(3n, { name: 'Tulip' }, { ifMatch: [stale, current] }), { outcome: 'updated', plant: { name: 'Tulip', tag: 'red' } })
    t.equal(await store.update(3n, { name: 'Lily' }, { ifMatch: [current] }), undefined, 'the tag it had is stale now')
    t.equal(await store.update(4n, { name: 'Lily' }, { ifMatch: [current] }), undefined, 'no plant')
    t.equal(await store.delete(3n, { ifMatch: [current] }), false)
    t.equal(await store.delete(3n, { ifMatch: [plantEtag({ name: 'Tulip', tag: 'red' })] }), true)
    t.equal(await store.get(3n), undefined)
  })

  t.test('ifNoneMatch: the change or delete is refused when the current ETag is among the tags, after ifMatch', async (t) => {
    const { store } = await open(t)
    await store.create({ id: 3n, name: 'Rose', tag: 'red' })
    const current = plantEtag({ name: 'Rose', tag: 'red' })
    const other = plantEtag({ name: 'Rose' })
    const refused = { outcome: 'refused', plant: { name: 'Rose', tag: 'red' } }
    t.same(await store.update(3n, { name: 'Tulip' }, { ifNoneMatch: [other, current] }), refused)
    t.equal(await store.delete(3n, { ifNoneMatch: [current] }), 'refused')
    t.same(await store.update(3n, { name: 'Tulip' }, { ifMatch: [current], ifNoneMatch: [current] }), refused, 'both: If-Match holds, If-None-Match refuses')
    t.equal(await store.update(3n, { name: 'Tulip' }, { ifMatch: [other], ifNoneMatch: [current] }), undefined, 'If-Match is checked first')
    t.equal(await store.delete(3n, { ifMatch: [other], ifNoneMatch: [current] }), false)
    t.same(await store.get(3n), { name: 'Rose', tag: 'red' }, 'nothing changed')
    t.equal(await store.update(4n, { name: 'Lily' }, { ifNoneMatch: [current] }), undefined, 'no plant: undefined, not refused')
    t.equal(await store.delete(4n, { ifNoneMatch: [current] }), false)
    t.same(await store.update(3n, {}, { ifNoneMatch: [other] }), { outcome: 'unchanged', plant: { name: 'Rose', tag: 'red' } })
    t.same(await store.update(3n, { name: 'Tulip' }, { ifNoneMatch: [other, 'not one of ours'] }), { outcome: 'updated', plant: { name: 'Tulip', tag: 'red' } })
    t.same(await store.update(3n, { name: 'Lily' }, { ifNoneMatch: [] }), { outcome: 'updated', plant: { name: 'Lily', tag: 'red' } }, 'an empty list names nothing')
    t.equal(await store.delete(3n, { ifMatch: [plantEtag({ name: 'Lily', tag: 'red' })], ifNoneMatch: [current] }), true)
    t.equal(await store.get(3n), undefined)
  })

  t.test('writes of one id in one batch apply in arrival order, each checked against the one before', async (t) => {
    const { store } = await open(t)
    const a = plantEtag({ name: 'A' })
    const b = plantEtag({ name: 'B' })
    await store.create({ id: 9n, name: 'old' })
    // Called in one turn of the event loop: one batch.
    const results = await Promise.all([
      store.create({ id: 1n, name: 'A' }),
      store.update(1n, { name: 'B' }, { ifMatch: [a] }),
      store.update(1n, { name: 'C' }, { ifMatch: [a] }),
      store.update(1n, { tag: 't' }, { ifMatch: [b] }),
      store.update(9n, { name: 'new' }),
      store.delete(1n, { ifMatch: [b] }),
      store.delete(1n),
      store.update(1n, { name: 'D' }),
      store.create({ id: 1n, name: 'E' }),
      store.update(1n, { name: 'F' }),
      store.update(9n, { name: 'newer' }),
      store.update(2n, { name: 'G' }),
      store.delete(9n, { ifMatch: [plantEtag({ name: 'newer' })] }),
      store.delete(9n)
    ])
    t.same(results, [
      { outcome: 'created', plant: { name: 'A' } },
      { outcome: 'updated', plant: { name: 'B' } },
      undefined,
      { outcome: 'updated', plant: { name: 'B', tag: 't' } },
      { outcome: 'updated', plant: { name: 'new' } },
      false,
      true,
      undefined,
      { outcome: 'created', plant: { name: 'E' } },
      { outcome: 'updated', plant: { name: 'F' } },
      { outcome: 'updated', plant: { name: 'newer' } },
      undefined,
      true,
      false
    ])
    t.same(await store.list({ limit: 10 }), [{ id: 1n, name: 'F' }])
  })

  t.test('many changes of many ids in one turn: each committed with its own outcome', async (t) => {
    const { store } = await open(t)
    await Promise.all(Array.from({ length: 1500 }, (_, i) => store.create({ id: BigInt(i), name: `p${i}` })))
    const results = await Promise.all(Array.from({ length: 1500 }, (_, i) =>
      store.update(BigInt(i), i % 3 === 0 ? { name: `p${i}` } : { tag: `t${i % 3}` }, { ifMatch: i % 2 === 0 ? [plantEtag({ name: `p${i}` })] : undefined })))
    t.ok(results.every((result, i) => result?.outcome === (i % 3 === 0 ? 'unchanged' : 'updated')))
    t.same((await store.list({ limit: 100, tag: 't2' })).length, 100)
  })
})
