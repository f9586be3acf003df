// The read scenarios' store: a million plants, written by one bulk statement
// (a row at a time through the API would take longer than the whole bench).
import Database from 'better-sqlite3'
import pg from 'pg'
import { openStore, type PlantStore } from '../src/store/index.js'

// The plant the baseline's store makes up for the same id, so both answers have one size.
const NAME = "'plant ' || i"
const TAG = "'bench'"

async function open (databaseUrl: string): Promise<PlantStore> {
  return openStore({ databaseUrl, sqliteSynchronous: 'normal', databasePoolSize: 1, databaseTimeout: 60_000 })
}

/** Migrates the store with the service's own code, then fills it with plants 1…count; returns the ms the fill took. */
export async function fillStore (databaseUrl: string, count: number): Promise<number> {
  await (await open(databaseUrl)).close()
  const started = performance.now()
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new Database(databaseUrl.slice('sqlite:'.length))
    db.prepare(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
      INSERT INTO plants (id, name, tag) SELECT i, ${NAME}, ${TAG} FROM n`).run(count)
    // Leaves the rows in the database file, not in a WAL the server would read through.
    db.pragma('wal_checkpoint(TRUNCATE)')
    db.close()
  } else {
    const client = new pg.Client({ connectionString: databaseUrl })
    await client.connect()
    await client.query(`INSERT INTO plants (id, name, tag) SELECT i, ${NAME}, ${TAG} FROM generate_series(1, $1::bigint) i`, [count])
    // Statistics for the planner and a visibility map, as a table of that size would have by then.
    await client.query('VACUUM ANALYZE plants')
    await client.end()
  }
  return performance.now() - started
}

export interface PageTimes {
  /** µs per page: the median over the rounds. */
  first: number
  deep: number
  /** The median over the rounds of deep ÷ first, each round's two batches run back to back. */
  ratio: number
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

/**
 * µs per page read through the store alone (no HTTP), the first page against one
 * after `deepAfter`, in many short rounds (a batch of each, the order flipping every
 * round): a pair is a millisecond or two apart, so most pairs run between two
 * preemptions by other work on the machine, and the median ignores the rest.
 */
export async function timePages (databaseUrl: string, deepAfter: bigint, rounds = 201, pages = 20): Promise<PageTimes> {
  const store = await open(databaseUrl)
  const times = { first: [] as number[], deep: [] as number[] }
  try {
    for (let round = 0; round < rounds; round++) {
      for (const kind of round % 2 === 0 ? ['first', 'deep'] as const : ['deep', 'first'] as const) {
        const after = kind === 'deep' ? deepAfter : undefined
        const started = performance.now()
        // limit 21: the route asks for one more than the page of 20.
        for (let i = 0; i < pages; i++) await store.list({ limit: 21, after })
        times[kind].push((performance.now() - started) * 1000 / pages)
      }
    }
  } finally {
    await store.close()
  }
  return { first: median(times.first), deep: median(times.deep), ratio: median(times.deep.map((deep, i) => deep / times.first[i])) }
}
