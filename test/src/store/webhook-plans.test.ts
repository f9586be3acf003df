import Database from 'better-sqlite3'
import t from 'tap'
import { openSqliteStore } from '../../../src/store/sqlite/index.js'
import { EXPANSION } from '../../../src/store/sqlite/outbox.js'
import { PLANNED } from '../../../src/store/sqlite/webhooks.js'
import { connect, freshPostgresUrl, PG_SKIP } from '../../helpers/postgres.js'

// The outbox's hot statements start at their key in an index, at any size of backlog or
// history: the claim at the oldest due delivery, a page at its cursor, the prune at the
// oldest succeeded delivery, a finish at its deliveries' keys. No full scan and no sort.

t.test('SQLite serves the outbox from its indexes', async (t) => {
  const path = `${t.testdir()}/plans.db`
  await openSqliteStore({ path }).close()
  const db = new Database(path)
  t.teardown(() => db.close())
  const plan = (sql: string, values: unknown) => (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(values as never) as Array<{ detail: string }>).map((row) => row.detail)
  const claim = plan(PLANNED.claim, { owner: 'o', until: 2, now: 1, limit: 10, exclude: '["ep_slow"]' })
  for (const step of [
    'SEARCH webhook_deliveries USING COVERING INDEX sqlite_autoindex_webhook_deliveries_1 (id=?)',
    'SEARCH d USING INDEX webhook_deliveries_due (next_attempt_at<?)',
    'SEARCH e USING INDEX sqlite_autoindex_webhook_endpoints_1 (id=?)'
  ]) t.ok(claim.includes(step), `claim: ${step}`)
  t.notOk(claim.some((line) => /SCAN (d|e|webhook_)|TEMP B-TREE/.test(line)), `claim: no full scan, no sort: ${claim}`)
  t.same(plan(PLANNED.firstPage, { endpoint: 'ep', limit: 21 }), [
    'SEARCH d USING INDEX webhook_deliveries_endpoint (endpoint_id=?)',
    'SEARCH e USING INTEGER PRIMARY KEY (rowid=?)'
  ], 'first page')
  t.same(plan(PLANNED.nextPage, { endpoint: 'ep', limit: 21, createdAt: 1, id: 'msg' }), [
    'SEARCH d USING INDEX webhook_deliveries_endpoint (endpoint_id=? AND (created_at,id)<(?,?))',
    'SEARCH e USING INTEGER PRIMARY KEY (rowid=?)'
  ], 'next page')
  t.same(plan(PLANNED.prune, [1, 500]), [
    'SEARCH webhook_deliveries USING INTEGER PRIMARY KEY (rowid=?)',
    'LIST SUBQUERY 1',
    'SEARCH webhook_deliveries USING INDEX webhook_deliveries_finished (finished_at<?)'
  ], 'prune')
  t.same(plan(PLANNED.orphan, [1, 1]), [
    'SEARCH webhook_events USING INTEGER PRIMARY KEY (rowid=?)',
    'SCALAR SUBQUERY 1',
    'SCAN webhook_feed',
    'SCALAR SUBQUERY 2',
    'SEARCH webhook_deliveries USING COVERING INDEX webhook_deliveries_event (event_id=?)'
  ], 'events left without deliveries, below the feed\'s floor')
  // The expansion: the events still to expand from their partial index, an event's endpoints in id order from where it stopped.
  const unexpanded = plan(EXPANSION.unexpanded, [100])
  t.ok(unexpanded.some((line) => line.includes('USING INDEX webhook_events_fanout')), `unexpanded: ${unexpanded}`)
  const fanout = plan(EXPANSION.fanout, { now: 1, event: 1, stopped: 'x', createdAt: 1, after: '', generation: 1, bit: 1, limit: 500 })
  t.ok(fanout.some((line) => line.includes('USING INDEX webhook_subscriptions_endpoint (endpoint_id>?)')), `fanout: ${fanout}`)
  t.notOk([...unexpanded, ...fanout].some((line) => /TEMP B-TREE/.test(line)), 'no sort')
})

t.test('PostgreSQL serves the outbox from its indexes', { skip: PG_SKIP && `PostgreSQL: ${PG_SKIP}` }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  const { openPostgresStore } = await import('../../../src/store/postgres/index.js')
  const { CLAIM, ORPHANS, PRUNE } = await import('../../../src/store/postgres/outbox.js')
  const { PAGES } = await import('../../../src/store/postgres/webhooks.js')
  const { FINISH } = await import('../../../src/store/postgres/finish.js')
  await (await openPostgresStore({ url, poolSize: 1, timeout: 5000 })).close()
  const db = await connect(t, url)
  // A history of 100,000 deliveries to 20 endpoints, 10 of them enabled: most succeeded, some
  // failed, and a backlog due to the enabled ones (the planner sorts a small backlog instead).
  await db.query("INSERT INTO webhook_endpoints (id, url, enabled, secret) SELECT 'ep_' || i, 'https://x.example/', i % 2 = 0, 's' FROM generate_series(1, 20) AS i")
  await db.query("INSERT INTO webhook_events (plant_id, body) SELECT i, '{}' FROM generate_series(1, 100000) AS i")
  await db.query(`INSERT INTO webhook_deliveries (id, event_id, endpoint_id, status, next_attempt_at, created_at)
    SELECT 'msg_' || i, i, 'ep_' || (i % 20 + 1), CASE WHEN i % 2 = 1 AND i % 3 = 0 THEN 'pending' WHEN i % 7 = 0 THEN 'failed' ELSE 'succeeded' END,
      CASE WHEN i % 2 = 1 AND i % 3 = 0 THEN now() - interval '1 hour' + i * interval '1 ms' END, now() - (100000 - i) * interval '1 second'
    FROM generate_series(1, 100000) AS i`)
  await db.query('ANALYZE')
  const plan = async (sql: string, values: unknown[]) => (await db.query(`EXPLAIN ${sql}`, values)).rows.map((row) => row['QUERY PLAN'] as string).join('\n')
  const cut = new Date(Date.now() - 20 * 3600 * 1000)
  const shapes: Array<[string, string, unknown[], RegExp[]]> = [
    ['claim', CLAIM, ['o', 100, 60000, ['ep_4']], [/Index Scan using webhook_deliveries_due/, /Index Scan using webhook_deliveries_pkey on webhook_deliveries d .*\n\s+Index Cond: \(id = ANY/]],
    ['first page', PAGES.first, ['ep_3', 21], [/^Limit/, /Index Scan using webhook_deliveries_endpoint[\s\S]*Index Cond: \(endpoint_id = /]],
    ['next page', PAGES.next, ['ep_3', 21, new Date(), 'msg_5'], [/^Limit/, /Index Scan using webhook_deliveries_endpoint[\s\S]*Index Cond: \(\(endpoint_id = .*\) AND \(ROW\(created_at, id\) < ROW/]],
    ['finish', FINISH, [['msg_3', 'msg_9'], ['o', 'o'], ['succeeded', 'pending'], [200, null], [null, 'HTTP 503'], [null, new Date()]],
      [/Index Scan using webhook_deliveries_pkey on webhook_deliveries d\b/]],
    ['prune', PRUNE, [cut, 500], [/Index Scan using webhook_deliveries_finished/, /Index Scan using webhook_deliveries_pkey on webhook_deliveries .*\n\s+Index Cond: \(id = ANY/]],
    ['events left without deliveries', ORPHANS, [[1, 2, 3]], [/Index Scan using webhook_events_pkey/, /Index (Only )?Scan using webhook_deliveries_event/]]
  ]
  for (const [name, sql, values, expected] of shapes) {
    const text = await plan(sql, values)
    for (const pattern of expected) t.match(text, pattern, name)
    t.notMatch(text, /Seq Scan on webhook_(deliveries|events)|Sort/, `${name}: no full scan, no sort\n${text}`)
  }
})

// What a plan read from webhook_deliveries, in rows, EXPLAIN ANALYZE's JSON walked through.
interface PlanNode { 'Relation Name'?: string, 'Actual Rows'?: number, 'Actual Loops'?: number, 'Rows Removed by Filter'?: number, 'Rows Removed by Index Recheck'?: number, Plans?: PlanNode[] }
function deliveriesRead (node: PlanNode): number {
  const own = node['Relation Name'] === 'webhook_deliveries'
    ? ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) * (node['Actual Loops'] ?? 1)
    : 0
  return own + (node.Plans ?? []).reduce((sum, child) => sum + deliveriesRead(child), 0)
}

t.test('PostgreSQL reads only the rows a claim or a finish needs while its statistics say the outbox is empty', { skip: PG_SKIP && `PostgreSQL: ${PG_SKIP}` }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  const { openPostgresStore } = await import('../../../src/store/postgres/index.js')
  const { CLAIM } = await import('../../../src/store/postgres/outbox.js')
  const { FINISH } = await import('../../../src/store/postgres/finish.js')
  await (await openPostgresStore({ url, poolSize: 1, timeout: 5000 })).close()
  const db = await connect(t, url)
  // Statistics taken while the outbox was empty, and no autovacuum to refresh them (it runs
  // once a minute at most): then a backlog of 20,000 to one endpoint, as after a burst of creates.
  for (const table of ['webhook_endpoints', 'webhook_events', 'webhook_deliveries']) await db.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`)
  await db.query("INSERT INTO webhook_endpoints (id, url, enabled, secret) VALUES ('ep_1', 'https://x.example/', true, 's')")
  await db.query('ANALYZE')
  await db.query("INSERT INTO webhook_events (plant_id, body) SELECT i, '{}' FROM generate_series(1, 20000) AS i")
  await db.query(`INSERT INTO webhook_deliveries (id, event_id, endpoint_id, status, next_attempt_at)
    SELECT 'msg_' || lpad(i::text, 6, '0'), i, 'ep_1', 'pending', now() - interval '1 hour' + i * interval '1 ms' FROM generate_series(1, 20000) AS i`)
  // As the store sends them: unnamed, so planned for these values and the table as it is now.
  const read = async (sql: string, values: unknown[]) => {
    await db.query('BEGIN')
    try {
      const { rows } = await db.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, values)
      return deliveriesRead(rows[0]['QUERY PLAN'][0].Plan as PlanNode)
    } finally {
      await db.query('ROLLBACK')
    }
  }
  const claimed = await read(CLAIM, ['o', 16, 60000, []])
  t.ok(claimed <= 64, `a claim of 16 read ${claimed} rows of 20,000`)
  const ids = Array.from({ length: 16 }, (_, i) => `msg_${String(i * 1000 + 1).padStart(6, '0')}`)
  await db.query("UPDATE webhook_deliveries SET lease_owner = 'o' WHERE id = ANY($1)", [ids])
  const finished = await read(FINISH, [ids, ids.map(() => 'o'), ids.map(() => 'succeeded'), ids.map(() => 200), ids.map(() => null), ids.map(() => null)])
  t.ok(finished <= 64, `a finish of 16 read ${finished} rows of 20,000`)
})
