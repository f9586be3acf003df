import { randomBytes } from 'node:crypto'
import type Database from 'better-sqlite3'
import { pendingMigrations } from '../migrations.js'

// Versioned migrations: step N brings user_version from N to N + 1. Append only.
export const MIGRATIONS = [
  'CREATE TABLE plants (id INTEGER PRIMARY KEY, name TEXT NOT NULL, tag TEXT) STRICT',
  // Serves a tag-filtered page by key: WHERE tag = ? AND id > ? ORDER BY id.
  'CREATE INDEX plants_tag_id ON plants (tag, id)',
  // One row that /ready rewrites: only a committed write shows that the store can be written.
  'CREATE TABLE plant_store_probe (id INTEGER PRIMARY KEY CHECK (id = 1), at INTEGER NOT NULL) STRICT',
  // Webhooks: subscriptions, and the outbox (an event per plant added, a delivery per endpoint).
  `CREATE TABLE webhook_endpoints (
    id TEXT PRIMARY KEY, url TEXT NOT NULL, description TEXT, enabled INTEGER NOT NULL,
    secret TEXT NOT NULL, previous_secret TEXT, previous_secret_until INTEGER, created_at INTEGER NOT NULL
  ) STRICT;
  CREATE TABLE webhook_events (id INTEGER PRIMARY KEY, plant_id INTEGER NOT NULL, body TEXT NOT NULL, created_at INTEGER NOT NULL) STRICT;
  CREATE TABLE webhook_deliveries (
    id TEXT PRIMARY KEY, event_id INTEGER NOT NULL, endpoint_id TEXT NOT NULL, status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0, last_status INTEGER, last_error TEXT, next_attempt_at INTEGER,
    lease_owner TEXT, lease_until INTEGER, created_at INTEGER NOT NULL
  ) STRICT;
  -- The claim: due deliveries, oldest first.
  CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
  -- An endpoint's deliveries page by page, newest first.
  CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);
  -- The prune: succeeded deliveries by age, then the events left without deliveries.
  CREATE INDEX webhook_deliveries_succeeded ON webhook_deliveries (created_at) WHERE status = 'succeeded';
  CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);`,
  // While writes fail, /ready writes a batch's worth of room here and frees it again.
  'CREATE TABLE plant_store_headroom (room BLOB NOT NULL) STRICT',
  // Secrets the service keeps, made once and read by every process on the file (cursorKey).
  'CREATE TABLE plant_store_keys (name TEXT PRIMARY KEY, key BLOB NOT NULL) STRICT',
  // The endpoints page by key, oldest first.
  'CREATE INDEX webhook_endpoints_created ON webhook_endpoints (created_at, id)',
  // Typed events through a bounded outbox: a change writes one event.
  `ALTER TABLE webhook_endpoints ADD COLUMN events INTEGER;
  ALTER TABLE webhook_events ADD COLUMN type TEXT NOT NULL DEFAULT 'plant.created';
  ALTER TABLE webhook_events ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE webhook_events ADD COLUMN fanout TEXT;
  ALTER TABLE webhook_deliveries ADD COLUMN standard INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX webhook_events_fanout ON webhook_events (id) WHERE fanout IS NOT NULL;
  CREATE TABLE webhook_subscriptions (endpoint_id TEXT NOT NULL, events INTEGER, since INTEGER NOT NULL, until INTEGER, closed_at INTEGER) STRICT;
  CREATE INDEX webhook_subscriptions_endpoint ON webhook_subscriptions (endpoint_id, since);
  CREATE TABLE webhook_generation (id INTEGER PRIMARY KEY CHECK (id = 1), value INTEGER NOT NULL, mask INTEGER NOT NULL) STRICT;
  INSERT INTO webhook_subscriptions (endpoint_id, events, since) SELECT id, NULL, 0 FROM webhook_endpoints WHERE enabled = 1;
  INSERT INTO webhook_generation (id, value, mask) VALUES (1, 0, (SELECT count(*) > 0 FROM webhook_endpoints WHERE enabled = 1));`,
  // Finished deliveries, succeeded or failed, are pruned by when they finished.
  `ALTER TABLE webhook_deliveries ADD COLUMN finished_at INTEGER;
  UPDATE webhook_deliveries SET finished_at = created_at WHERE status <> 'pending';
  DROP INDEX webhook_deliveries_succeeded;
  CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (finished_at) WHERE status <> 'pending';
  ALTER TABLE webhook_endpoints ADD COLUMN failing_since INTEGER;
  ALTER TABLE webhook_endpoints ADD COLUMN disabled_at INTEGER;
  ALTER TABLE webhook_endpoints ADD COLUMN disabled_reason TEXT;`,
  // The change feed: the events above the floor are its own (every change writes one).
  `CREATE TABLE webhook_feed (id INTEGER PRIMARY KEY CHECK (id = 1), floor INTEGER NOT NULL) STRICT;
  INSERT INTO webhook_feed (id, floor) VALUES (1, (SELECT coalesce(max(id), 0) FROM webhook_events));`
]

/** Brings the database to this build's schema version, in one transaction. */
export function migrate (db: Database.Database): void {
  // IMMEDIATE takes the write lock first, so instances starting together migrate one at a time.
  db.transaction(() => {
    const version = db.pragma('user_version', { simple: true }) as number
    for (const step of pendingMigrations(MIGRATIONS, version)) db.exec(step.sql)
    db.pragma(`user_version = ${MIGRATIONS.length}`)
  }).immediate()
}

/** The key that authenticates list cursors. */
export function cursorKey (db: Database.Database): Buffer {
  return db.transaction(() => {
    db.prepare("INSERT INTO plant_store_keys (name, key) VALUES ('cursor', ?) ON CONFLICT (name) DO NOTHING").run(randomBytes(32))
    return db.prepare("SELECT key FROM plant_store_keys WHERE name = 'cursor'").pluck().get() as Buffer
  }).immediate()
}
