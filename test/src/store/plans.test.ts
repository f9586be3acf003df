import Database from 'better-sqlite3'
import t from 'tap'
import { openSqliteStore } from '../../../src/store/sqlite/index.js'
import { connect, freshPostgresUrl, PG_SKIP } from '../../helpers/postgres.js'

// A page costs the same at any depth: each query the list runs starts at its key
// in an index and stops after LIMIT rows. No OFFSET, no full scan, no sort, no count.

t.test('SQLite serves every page shape from an index', async (t) => {
  const path = `${t.testdir()}/plans.db`
  const store = openSqliteStore({ path })
  await store.close()
  const db = new Database(path)
  t.teardown(() => db.close())
  const plan = (sql: string, ...args: unknown[]) => (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as Array<{ detail: string }>).map((row) => row.detail)
  const columns = 'SELECT id, name, tag FROM plants'
  t.same(plan(`${columns} ORDER BY id LIMIT 21`), ['SCAN plants'], 'the first page walks the table in rowid order and stops at LIMIT')
  t.same(plan(`${columns} WHERE id > ? ORDER BY id LIMIT 21`, 900000), ['SEARCH plants USING INTEGER PRIMARY KEY (rowid>?)'])
  t.same(plan(`${columns} WHERE tag = ? ORDER BY id LIMIT 21`, 'a'), ['SEARCH plants USING INDEX plants_tag_id (tag=?)'])
  t.same(plan(`${columns} WHERE tag = ? AND id > ? ORDER BY id LIMIT 21`, 'a', 900000), ['SEARCH plants USING INDEX plants_tag_id (tag=? AND id>?)'])
})

t.test('PostgreSQL serves every page shape from an index', { skip: PG_SKIP && `PostgreSQL: ${PG_SKIP}` }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  const { openPostgresStore } = await import('../../../src/store/postgres/index.js')
  const store = await openPostgresStore({ url, poolSize: 1, timeout: 5000 })
  await store.close()
  const client = await connect(t, url)
  // Enough rows, spread over tags, that the planner weighs an index against a scan for real.
  await client.query("INSERT INTO plants SELECT i, 'plant ' || i, 'tag' || (i % 500) FROM generate_series(1, 200000) AS i")
  await client.query('ANALYZE plants')
  const plan = async (sql: string, ...args: unknown[]) => {
    const { rows } = await client.query(`EXPLAIN ${sql}`, args)
    return rows.map((row) => row['QUERY PLAN'] as string).join('\n')
  }
  const columns = 'SELECT id, name, tag FROM plants'
  const shapes: Array<[string, unknown[], RegExp]> = [
    [`${columns} ORDER BY id LIMIT 21`, [], /Index Scan using plants_pkey on plants/],
    [`${columns} WHERE id > $1 ORDER BY id LIMIT 21`, ['100000'], /Index Scan using plants_pkey on plants[\s\S]*Index Cond: \(id > /],
    [`${columns} WHERE tag = $1 ORDER BY id LIMIT 21`, ['tag7'], /Index Scan using plants_tag_id on plants[\s\S]*Index Cond: \(tag = /],
    [`${columns} WHERE tag = $1 AND id > $2 ORDER BY id LIMIT 21`, ['tag7', '100000'], /Index Scan using plants_tag_id on plants[\s\S]*Index Cond: \(\(tag = .*\) AND \(id > /]
  ]
  for (const [sql, args, expected] of shapes) {
    const text = await plan(sql, ...args)
    t.match(text, /^Limit/, `${sql}: stops at LIMIT`)
    t.match(text, expected, sql)
    t.notMatch(text, /Seq Scan|Sort|Offset/, `${sql}: no full scan, no sort\n${text}`)
  }
})
