import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises'
import type { Client } from 'pg'
import t, { type Test } from 'tap'
import type { Plant } from '../../../schemas/plant.js'
import { readTurns } from '../../../src/store/postgres/reads.js'
import { StoreUnavailableError, type PlantStore } from '../../../src/store/types.js'
import { connect, freshPostgresUrl, PG_SKIP } from '../../helpers/postgres.js'

const skip = PG_SKIP && `PostgreSQL: ${PG_SKIP}`
const SELECT_MANY = 'SELECT id, name, tag FROM plants WHERE id = ANY($1::bigint[])'

/** A select over a fixed table that records the ids of each statement it is asked for. */
function recorded (table: Record<string, Plant>) {
  const sent: string[][] = []
  const select = async (ids: string[]) => {
    sent.push(ids)
    return new Map(ids.filter((id) => id in table).map((id) => [id, table[id]]))
  }
  return { sent, select }
}

t.test('the gets of one turn go out after it as one statement of their distinct ids, each caller told its own row', async (t) => {
  const { sent, select } = recorded({ 1: { name: 'Ivy' }, '9007199254740993': { name: 'Far', tag: 'x' } })
  const reads = readTurns(select)
  const turn = [reads.get(1n), reads.get(2n), reads.get(9007199254740993n), reads.get(1n), reads.get(9007199254740992n)]
  t.strictSame(sent, [], 'nothing is sent during the turn')
  t.strictSame(await Promise.all(turn), [{ name: 'Ivy' }, undefined, { name: 'Far', tag: 'x' }, { name: 'Ivy' }, undefined])
  t.strictSame(sent, [['1', '2', '9007199254740993', '9007199254740992']], 'one statement, each id once, exact')

  t.strictSame(await reads.get(1n), { name: 'Ivy' }, 'a get alone in its turn')
  t.equal(sent.length, 2)
})

t.test('a turn of more than 1000 gets is split into statements of 1000 at most', async (t) => {
  const { sent, select } = recorded({ 1500: { name: 'Mid' } })
  const reads = readTurns(select)
  const answers = await Promise.all(Array.from({ length: 2001 }, (_, i) => reads.get(BigInt(i + 1))))
  t.strictSame(sent.map((ids) => ids.length), [1000, 1000, 1])
  t.strictSame(answers[1499], { name: 'Mid' })
  t.equal(answers.filter((answer) => answer !== undefined).length, 1)
})

t.test('an error of a statement reaches each of its gets; an id beyond int64 goes alone and fails alone', async (t) => {
  const refused = Object.assign(new Error('value out of range for type bigint'), { code: '22003' })
  const sent: string[][] = []
  const reads = readTurns(async (ids) => {
    sent.push(ids)
    if (ids.some((id) => BigInt(id) >= 2n ** 63n)) throw refused
    if (ids.includes('13')) throw new Error('this statement only')
    return new Map([['1', { name: 'Ivy' }]])
  })
  const [big, one] = await Promise.allSettled([reads.get(2n ** 63n), reads.get(1n)])
  t.strictSame(sent, [['9223372036854775808'], ['1']], 'sent at once, on its own')
  t.strictSame(big, { status: 'rejected', reason: refused })
  t.strictSame(one, { status: 'fulfilled', value: { name: 'Ivy' } })

  const failed = await Promise.allSettled([reads.get(1n), reads.get(13n)])
  t.match(failed, [{ status: 'rejected', reason: { message: 'this statement only' } }, { status: 'rejected', reason: { message: 'this statement only' } }])
})

t.test('drain sends the gets waiting now and waits for every one sent', async (t) => {
  const sent: string[][] = []
  let answer = (): void => {}
  const reads = readTurns((ids) => {
    sent.push(ids)
    return new Promise((resolve) => { answer = () => resolve(new Map([['1', { name: 'Ivy' }]])) })
  })
  const waiting = reads.get(1n)
  let drained = false
  const drain = reads.drain().then(() => { drained = true })
  t.strictSame(sent, [['1']], 'sent by drain, not after the turn')
  await sleep(20)
  t.equal(drained, false, 'still answering')
  answer()
  await drain
  t.strictSame(await waiting, { name: 'Ivy' })
  await nextTurn()
  t.equal(sent.length, 1, 'the turn\'s own flush finds nothing left')
})

async function open (t: Test, url: string, poolSize: number, timeout: number): Promise<PlantStore> {
  const { openPostgresStore } = await import('../../../src/store/postgres/index.js')
  const store = await openPostgresStore({ url, poolSize, timeout })
  t.teardown(() => store.close())
  return store
}

/**
 * The statements of the store's connections that wait for a lock now, one per connection.
 * One that waits at its bind (to check its plan) is listed as idle, with the text of
 * the connection's last statement: the same, once `warm` has run.
 */
async function waiting (db: Client): Promise<string[]> {
  const { rows } = await db.query<{ query: string }>("SELECT query FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'plant-store' AND wait_event_type = 'Lock'")
  return rows.map((row) => row.query)
}

/** Opens three of the store's connections and prepares the statement on each (parsed under the lock, it would have no text). */
async function warm (store: PlantStore): Promise<void> {
  await Promise.all(Array.from({ length: 2001 }, (_, i) => store.get(BigInt(i))))
}

async function settled<T> (promise: Promise<T>): Promise<{ ms: number, value?: T, error?: unknown }> {
  const start = performance.now()
  try {
    return { ms: performance.now() - start, value: await promise }
  } catch (error) {
    return { ms: performance.now() - start, error }
  }
}

t.test('the store: gets of one turn each get their own answer, ids beyond 2^53 exact, one beyond int64 failing alone', { skip }, async (t) => {
  const store = await open(t, await freshPostgresUrl(t) as string, 4, 5000)
  for (const id of [1n, 9007199254740993n, 9007199254740992n, -9223372036854775808n]) await store.create({ id, name: `plant ${id}`, tag: id === 1n ? 'fern' : undefined })

  const turn = await Promise.allSettled([
    store.get(9007199254740993n),
    store.get(1n),
    store.get(404n),
    store.get(9007199254740992n),
    store.get(2n ** 63n),
    store.get(-9223372036854775808n),
    store.get(9007199254740993n)
  ])
  t.strictSame(turn, [
    { status: 'fulfilled', value: { name: 'plant 9007199254740993' } },
    { status: 'fulfilled', value: { name: 'plant 1', tag: 'fern' } },
    { status: 'fulfilled', value: undefined },
    { status: 'fulfilled', value: { name: 'plant 9007199254740992' } },
    turn[4],
    { status: 'fulfilled', value: { name: 'plant -9223372036854775808' } },
    { status: 'fulfilled', value: { name: 'plant 9007199254740993' } }
  ])
  t.match(turn[4], { status: 'rejected', reason: { code: '22003' } }, 'beyond int64: the server refuses it, for this get only')
  t.notOk((turn[4] as PromiseRejectedResult).reason instanceof StoreUnavailableError, 'as a server error, not an outage')
})

t.test('the store: one statement for a turn\'s gets; a caller whose time runs out hears at its deadline, the others still get their rows', { skip }, async (t) => {
  const TIMEOUT = 1500
  const url = await freshPostgresUrl(t) as string
  const store = await open(t, url, 4, TIMEOUT)
  await store.create({ id: 2n, name: 'Fern' })
  await warm(store)
  const db = await connect(t, url)
  await db.query('BEGIN')
  // Blocks every SELECT on plants until the ROLLBACK.
  await db.query('LOCK TABLE plants IN ACCESS EXCLUSIVE MODE')

  const early = settled(store.get(2n))
  // The same turn, 600 ms later (the thread sleeps; the loop does not turn): the gets share
  // one statement, sent after the turn, but each deadline counts from its own call.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 600)
  const late = Promise.all([store.get(2n), store.get(3n), store.get(2n)])

  const { ms, error } = await early
  t.type(error, StoreUnavailableError)
  t.match((error as Error).message, /no answer within 1500 ms/)
  t.ok(ms >= TIMEOUT - 50 && ms < TIMEOUT + 250, `the first caller heard at its deadline, after ${Math.round(ms)} ms`)
  t.strictSame(await waiting(db), [SELECT_MANY], 'one statement for the turn\'s four gets, still waiting')
  t.equal(await Promise.race([late.then(() => 'answered'), nextTurn('pending')]), 'pending', 'the others wait on')

  await db.query('ROLLBACK')
  t.strictSame(await late, [{ name: 'Fern' }, undefined, { name: 'Fern' }], 'and get their rows from it')
})

t.test('the store: a turn of 2001 gets goes out as three statements', { skip }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  const store = await open(t, url, 4, 5000)
  await store.create({ id: 7n, name: 'Seven' })
  await warm(store)
  const db = await connect(t, url)
  await db.query('BEGIN')
  await db.query('LOCK TABLE plants IN ACCESS EXCLUSIVE MODE')

  const turn = Promise.all(Array.from({ length: 2001 }, (_, i) => store.get(BigInt(i + 1))))
  for (const start = Date.now(); (await waiting(db)).length < 3 && Date.now() - start < 2000;) await sleep(20)
  await sleep(100)
  t.strictSame(await waiting(db), [SELECT_MANY, SELECT_MANY, SELECT_MANY], 'three statements, with a connection to spare')

  await db.query('ROLLBACK')
  const answers = await turn
  t.strictSame(answers[6], { name: 'Seven' })
  t.equal(answers.filter((answer) => answer !== undefined).length, 1)
})

t.test('the store: close answers the gets already called, then refuses', { skip }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  const { openPostgresStore } = await import('../../../src/store/postgres/index.js')
  const store = await openPostgresStore({ url, poolSize: 1, timeout: 5000 })
  for (const id of [1n, 2n, 3n]) await store.create({ id, name: `plant ${id}` })
  const db = await connect(t, url)
  await db.query('BEGIN')
  await db.query('LOCK TABLE plants IN ACCESS EXCLUSIVE MODE')

  // The first holds the only connection; the second waits in the pool for it; the third has not been sent.
  const first = store.get(1n)
  await nextTurn()
  await nextTurn()
  const second = store.get(2n)
  await nextTurn()
  const third = store.get(3n)
  const closed = store.close()
  await nextTurn()
  await t.rejects(store.get(1n), /store unavailable: the store is closed/, 'a get once close has begun')
  await sleep(200)
  await db.query('ROLLBACK')
  await closed
  t.strictSame(await Promise.all([first, second, third]), [{ name: 'plant 1' }, { name: 'plant 2' }, { name: 'plant 3' }])
  await t.rejects(store.get(1n), StoreUnavailableError, 'and after it')
})
