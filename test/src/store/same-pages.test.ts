import { join } from 'node:path'
import t from 'tap'
import { samePages } from '../../../src/store/same-pages.js'
import { openSqliteStore } from '../../../src/store/sqlite/index.js'
import type { ListQuery, PlantRecord } from '../../../src/store/types.js'

function counting () {
  const reads: ListQuery[] = []
  const list = samePages(async (query) => {
    reads.push(query)
    return [{ id: 1n, name: `limit ${query.limit}` }, { id: 2n, name: 'two' }]
  })
  return { reads, list }
}

t.test('the same page asked for in one turn is read once; each caller gets an array of its own', async (t) => {
  const { reads, list } = counting()
  const pages = await Promise.all([list({ limit: 2 }), list({ limit: 2 }), list({ limit: 2 })])
  t.equal(reads.length, 1)
  t.same(pages[1], pages[0])
  pages[0].length = 1
  t.equal(pages[1].length, 2, 'a caller that cuts its page leaves the others whole')

  await new Promise((resolve) => setImmediate(resolve))
  await list({ limit: 2 })
  t.equal(reads.length, 2, 'the next turn reads afresh')
})

t.test('pages that differ in limit, cursor or tag are read each for itself', async (t) => {
  const { reads, list } = counting()
  await Promise.all([
    list({ limit: 2 }), list({ limit: 3 }), list({ limit: 2, after: 5n }), list({ limit: 2, tag: 'fern' }),
    // No tag passes for a cursor or a limit.
    list({ limit: 2, tag: '5' }), list({ limit: 2, after: 5n, tag: '' }), list({ limit: 2, tag: ' 5 ' })
  ])
  t.same(reads, [
    { limit: 2 }, { limit: 3 }, { limit: 2, after: 5n }, { limit: 2, tag: 'fern' },
    { limit: 2, tag: '5' }, { limit: 2, after: 5n, tag: '' }, { limit: 2, tag: ' 5 ' }
  ])
})

t.test('a read that fails fails every caller that shared it', async (t) => {
  const list = samePages(async () => { throw new Error('store down') })
  const outcomes = await Promise.allSettled([list({ limit: 2 }), list({ limit: 2 })])
  t.match(outcomes, [{ status: 'rejected', reason: { message: 'store down' } }, { status: 'rejected', reason: { message: 'store down' } }])
})

t.test('SQLite: a shared page is the store\'s, and a write between turns is seen by the next', async (t) => {
  const store = openSqliteStore({ path: join(t.testdir(), 'plants.db') })
  t.teardown(() => store.close())
  await store.create({ id: 1n, name: 'one' })
  const [a, b] = await Promise.all([store.list({ limit: 5 }), store.list({ limit: 5 })])
  t.same(a, [{ id: 1n, name: 'one' }])
  t.not(a, b, 'two arrays')
  await store.create({ id: 2n, name: 'two', tag: 'fern' })
  t.same(await store.list({ limit: 5 }), [{ id: 1n, name: 'one' }, { id: 2n, name: 'two', tag: 'fern' }] satisfies PlantRecord[])
})
