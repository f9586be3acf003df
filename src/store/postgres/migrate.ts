import { randomBytes } from 'node:crypto'
import type pg from 'pg'
import { pendingMigrations } from '../migrations.js'
import { switchFeed } from './feed.js'

// Versioned migrations: MIGRATIONS[n] brings the schema from version n to n + 1. Append only.
export const MIGRATIONS = [
  'CREATE TABLE plants (id BIGINT PRIMARY KEY, name TEXT NOT NULL, tag TEXT)',
  // Serves a tag-filtered page by key: WHERE tag = $ AND id > $ ORDER BY id.
  'CREATE INDEX plants_tag_id ON plants (tag, id)',
  // Webhooks: subscriptions, and the outbox (an event per plant added, a delivery per endpoint).
  `CREATE TABLE webhook_endpoints (
    id TEXT COLLATE "C" PRIMARY KEY, url TEXT NOT NULL, description TEXT, enabled BOOLEAN NOT NULL,
    secret TEXT NOT NULL, previous_secret TEXT, previous_secret_until TIMESTAMPTZ,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
  );
  CREATE TABLE webhook_events (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, plant_id BIGINT NOT NULL, body TEXT NOT NULL,
    created_at TIMESTAMPTZ(3) NOT NULL DEFAULT now()
  );
  CREATE TABLE webhook_deliveries (
    id TEXT COLLATE "C" PRIMARY KEY, event_id BIGINT NOT NULL, endpoint_id TEXT COLLATE "C" NOT NULL,
    status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, last_status INTEGER, last_error TEXT,
    next_attempt_at TIMESTAMPTZ(3), lease_owner TEXT, lease_until TIMESTAMPTZ(3),
    created_at TIMESTAMPTZ(3) NOT NULL DEFAULT now()
  );
  -- The claim: due deliveries, oldest first.
  CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
  -- An endpoint's deliveries page by page, newest first.
  CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);
  -- The prune: succeeded deliveries by age, then the events left without deliveries.
  CREATE INDEX webhook_deliveries_succeeded ON webhook_deliveries (created_at) WHERE status = 'succeeded';
  CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);`,
  // Secrets the service keeps, made once and read by every instance (cursorKey).
  'CREATE TABLE plant_store_keys (name TEXT COLLATE "C" PRIMARY KEY, key BYTEA NOT NULL)',
  // The endpoints page by key, oldest first.
  `ALTER TABLE webhook_endpoints ALTER COLUMN created_at TYPE TIMESTAMPTZ(3);
  CREATE INDEX webhook_endpoints_created ON webhook_endpoints (created_at, id);`,
  // Typed events through a bounded outbox: a change writes one event.
  `ALTER TABLE webhook_endpoints ADD COLUMN events INTEGER;
  ALTER TABLE webhook_events ADD COLUMN type TEXT NOT NULL DEFAULT 'plant.created';
  ALTER TABLE webhook_events ADD COLUMN generation BIGINT NOT NULL DEFAULT 0;
  ALTER TABLE webhook_events ADD COLUMN fanout TEXT COLLATE "C";
  ALTER TABLE webhook_deliveries ADD COLUMN standard BOOLEAN NOT NULL DEFAULT false;
  CREATE INDEX webhook_events_fanout ON webhook_events (id) WHERE fanout IS NOT NULL;
  CREATE TABLE webhook_subscriptions (
    endpoint_id TEXT COLLATE "C" NOT NULL, events INTEGER, since BIGINT NOT NULL, until BIGINT, closed_at TIMESTAMPTZ
  );
  CREATE INDEX webhook_subscriptions_endpoint ON webhook_subscriptions (endpoint_id, since);
  CREATE TABLE webhook_generation (id INTEGER PRIMARY KEY CHECK (id = 1), value BIGINT NOT NULL, mask INTEGER NOT NULL);
  INSERT INTO webhook_subscriptions (endpoint_id, events, since) SELECT id, NULL, 0 FROM webhook_endpoints WHERE enabled;
  INSERT INTO webhook_generation (id, value, mask) VALUES (1, 0, (SELECT CASE WHEN count(*) > 0 THEN 1 ELSE 0 END FROM webhook_endpoints WHERE enabled));`,
  // Finished deliveries, succeeded or failed, are pruned by when they finished.
  `ALTER TABLE webhook_deliveries ADD COLUMN finished_at TIMESTAMPTZ(3);
  UPDATE webhook_deliveries SET finished_at = created_at WHERE status <> 'pending';
  DROP INDEX webhook_deliveries_succeeded;
  CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (finished_at) WHERE status <> 'pending';
  ALTER TABLE webhook_endpoints ADD COLUMN failing_since TIMESTAMPTZ(3);
  ALTER TABLE webhook_endpoints ADD COLUMN disabled_at TIMESTAMPTZ(3);
  ALTER TABLE webhook_endpoints ADD COLUMN disabled_reason TEXT;`,
  // The change feed: the events above the floor are its own (every change writes one).
  `CREATE TABLE webhook_feed (id INTEGER PRIMARY KEY CHECK (id = 1), floor BIGINT NOT NULL);
  INSERT INTO webhook_feed (id, floor) VALUES (1, (SELECT coalesce(max(id), 0) FROM webhook_events));`
]

/** Brings the database to this build's schema version, and the change feed on or off, in one transaction. */
export async function migrate (pool: pg.Pool, feed = false): Promise<void> {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    // Instances starting together take turns here; the lock ends with the transaction.
    await client.query("SELECT pg_advisory_xact_lock(hashtext('plant-store:migrations'))")
    await client.query('CREATE TABLE IF NOT EXISTS plant_store_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())')
    const { rows } = await client.query<{ version: number }>('SELECT coalesce(max(version), 0) AS version FROM plant_store_migrations')
    for (const step of pendingMigrations(MIGRATIONS, rows[0].version)) {
      await client.query(step.sql)
      await client.query('INSERT INTO plant_store_migrations (version) VALUES ($1)', [step.version])
    }
    await client.query(switchFeed(feed))
    await client.query('COMMIT')
    client.release()
  } catch (error) {
    // Releasing with the error drops the connection, which rolls the transaction back.
    client.release(error as Error)
    throw error
  }
}

/** The key that authenticates list cursors. */
export async function cursorKey (pool: pg.Pool): Promise<Buffer> {
  // The INSERT waits for a peer's concurrent one to end; the SELECT, a statement of its own, then sees its row.
  await pool.query("INSERT INTO plant_store_keys (name, key) VALUES ('cursor', $1) ON CONFLICT (name) DO NOTHING", [randomBytes(32)])
  const { rows } = await pool.query<{ key: Buffer }>("SELECT key FROM plant_store_keys WHERE name = 'cursor'")
  return rows[0].key
}
