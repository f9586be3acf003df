import Database from 'better-sqlite3'
import t from 'tap'
import { openSqliteStore } from '../../../src/store/sqlite/index.js'
import { connect, freshPostgresUrl, PG_SKIP } from '../../helpers/postgres.js'

// The webhook tables, as both stores' migrations make them.
const COLUMNS = {
  webhook_endpoints: ['id', 'url', 'description', 'enabled', 'secret', 'previous_secret', 'previous_secret_until', 'created_at', 'events',
    'failing_since', 'disabled_at', 'disabled_reason'],
  webhook_events: ['id', 'plant_id', 'body', 'created_at', 'type', 'generation', 'fanout'],
  webhook_deliveries: ['id', 'event_id', 'endpoint_id', 'status', 'attempts', 'last_status', 'last_error',
    'next_attempt_at', 'lease_owner', 'lease_until', 'created_at', 'standard', 'finished_at'],
  webhook_subscriptions: ['endpoint_id', 'events', 'since', 'until', 'closed_at'],
  webhook_generation: ['id', 'value', 'mask'],
  webhook_feed: ['id', 'floor']
}
const INDEXES = ['webhook_deliveries_due', 'webhook_deliveries_endpoint', 'webhook_deliveries_event', 'webhook_deliveries_finished',
  'webhook_endpoints_created', 'webhook_events_fanout', 'webhook_subscriptions_endpoint']

t.test('SQLite: the webhook tables and their indexes', async (t) => {
  const path = `${t.testdir()}/schema.db`
  await openSqliteStore({ path }).close()
  const db = new Database(path)
  t.teardown(() => db.close())
  for (const [table, columns] of Object.entries(COLUMNS)) {
    t.same((db.pragma(`table_info(${table})`) as Array<{ name: string }>).map((c) => c.name), columns, table)
  }
  const indexes = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name LIKE 'webhook_%' AND sql IS NOT NULL ORDER BY name").pluck().all()
  t.same(indexes, INDEXES)
})

t.test('PostgreSQL: the webhook tables and their indexes', { skip: PG_SKIP && `PostgreSQL: ${PG_SKIP}` }, async (t) => {
  const url = await freshPostgresUrl(t) as string
  const { openPostgresStore } = await import('../../../src/store/postgres/index.js')
  await (await openPostgresStore({ url, poolSize: 1, timeout: 5000 })).close()
  const db = await connect(t, url)
  for (const [table, columns] of Object.entries(COLUMNS)) {
    const { rows } = await db.query('SELECT column_name FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position', [table])
    t.same(rows.map((row) => row.column_name), columns, table)
  }
  const { rows } = await db.query("SELECT indexname FROM pg_indexes WHERE tablename LIKE 'webhook_%' AND indexname NOT LIKE '%_pkey' ORDER BY indexname")
  t.same(rows.map((row) => row.indexname), INDEXES)
})
