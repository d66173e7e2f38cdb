/**
 * The AppStore's SQLite schema and its migrations. Tables are prefixed `_svc_` so they
 * can never collide with anything else in the object's storage; the applied version is
 * stored in `_svc_meta` and migrations run inside blockConcurrencyWhile, before any
 * request sees the object (the pattern of DESIGN §5.4).
 */

export const SCHEMA_VERSION = 7;

/** Each entry moves the schema from version i to i+1. Never edit a shipped step. */
const MIGRATIONS: string[][] = [
  [
    "CREATE TABLE IF NOT EXISTS _svc_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
  ],
  [
    // One row per (collection, key). `rid` orders rows by first insertion and is the
    // tie-breaker of every sort, so cursors are stable.
    `CREATE TABLE _svc_rows (
       rid INTEGER PRIMARY KEY AUTOINCREMENT,
       collection TEXT NOT NULL,
       key TEXT NOT NULL,
       data TEXT NOT NULL,
       version INTEGER NOT NULL,
       bytes INTEGER NOT NULL,
       creator_kind TEXT NOT NULL, creator_id TEXT NOT NULL,
       editor_kind TEXT NOT NULL, editor_id TEXT NOT NULL,
       created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
       deleted_at TEXT, deleter_kind TEXT, deleter_id TEXT,
       purged INTEGER NOT NULL DEFAULT 0,
       UNIQUE (collection, key)
     )`,
    "CREATE INDEX _svc_rows_live ON _svc_rows (collection, deleted_at, rid)",
    "CREATE INDEX _svc_rows_deleted ON _svc_rows (collection, deleted_at) WHERE deleted_at IS NOT NULL",
    // Live rows' unique values, trimmed and case-folded, typed (`s:` text, `n:` number, `b:` boolean).
    `CREATE TABLE _svc_unique (
       collection TEXT NOT NULL, field TEXT NOT NULL, value TEXT NOT NULL, key TEXT NOT NULL,
       PRIMARY KEY (collection, field, value)
     )`,
    "CREATE INDEX _svc_unique_key ON _svc_unique (collection, key)",
    // The change feed: seq is the cursor, strictly increasing, never reused.
    `CREATE TABLE _svc_feed (
       seq INTEGER PRIMARY KEY AUTOINCREMENT,
       op TEXT NOT NULL, collection TEXT NOT NULL, key TEXT NOT NULL, version INTEGER,
       data TEXT, author_kind TEXT NOT NULL, author_id TEXT NOT NULL, ts TEXT NOT NULL
     )`,
    // Effects to hand to the queue, written in the same transaction as the row.
    `CREATE TABLE _svc_outbox (
       id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, rule_id TEXT NOT NULL,
       payload TEXT NOT NULL, created_at TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0
     )`,
    // Anonymous write budgets: one counter per (collection, scope, subject, day).
    `CREATE TABLE _svc_anon_budget (
       collection TEXT NOT NULL, scope TEXT NOT NULL, subject TEXT NOT NULL, day TEXT NOT NULL, used INTEGER NOT NULL,
       PRIMARY KEY (collection, scope, subject, day)
     )`,
  ],
  [
    // Live-row count and stored bytes, kept by triggers in the same transaction as every
    // row change, so the quota check of a write reads one row instead of scanning them all.
    "CREATE TABLE _svc_usage (id INTEGER PRIMARY KEY CHECK (id = 1), live_rows INTEGER NOT NULL, stored_bytes INTEGER NOT NULL)",
    `INSERT INTO _svc_usage (id, live_rows, stored_bytes) SELECT 1,
       COALESCE(sum(deleted_at IS NULL), 0), COALESCE(sum(CASE WHEN purged = 0 THEN bytes ELSE 0 END), 0) FROM _svc_rows`,
    `CREATE TRIGGER _svc_usage_insert AFTER INSERT ON _svc_rows BEGIN
       UPDATE _svc_usage SET live_rows = live_rows + (NEW.deleted_at IS NULL),
         stored_bytes = stored_bytes + (CASE WHEN NEW.purged = 0 THEN NEW.bytes ELSE 0 END) WHERE id = 1;
     END`,
    `CREATE TRIGGER _svc_usage_delete AFTER DELETE ON _svc_rows BEGIN
       UPDATE _svc_usage SET live_rows = live_rows - (OLD.deleted_at IS NULL),
         stored_bytes = stored_bytes - (CASE WHEN OLD.purged = 0 THEN OLD.bytes ELSE 0 END) WHERE id = 1;
     END`,
    `CREATE TRIGGER _svc_usage_update AFTER UPDATE OF deleted_at, purged, bytes ON _svc_rows BEGIN
       UPDATE _svc_usage SET
         live_rows = live_rows - (OLD.deleted_at IS NULL) + (NEW.deleted_at IS NULL),
         stored_bytes = stored_bytes - (CASE WHEN OLD.purged = 0 THEN OLD.bytes ELSE 0 END) + (CASE WHEN NEW.purged = 0 THEN NEW.bytes ELSE 0 END)
       WHERE id = 1;
     END`,
  ],
  [
    // An update entry's previous state (JSON `{ data, editor }`), so a reader who could see
    // the row before the update and cannot after gets a retraction (feed.ts `PriorRow`, visibility.ts).
    // Store-internal: never sent to any client. Entries written before this step have none.
    "ALTER TABLE _svc_feed ADD COLUMN prev TEXT",
  ],
  [
    // Recent socket closes for withdrawn access (watchers.ts `closeAll`): `selector` is the
    // JSON SocketSelector, null for every socket. A socket whose access was checked before
    // a matching close is turned away; rows older than a minute are dropped.
    "CREATE TABLE _svc_withdrawals (at INTEGER NOT NULL, selector TEXT)",
    "CREATE INDEX _svc_withdrawals_at ON _svc_withdrawals (at)",
  ],
  [
    // The store's due work (alarms.ts): when each job must run next at the latest, and how
    // many times in a row it failed. The alarm is set for the earliest `at`.
    "CREATE TABLE _svc_due (job TEXT PRIMARY KEY, at INTEGER NOT NULL, failures INTEGER NOT NULL DEFAULT 0)",
  ],
  [
    // An outbox entry now stays after the queue accepted its pointer, until the effect
    // consumer has recorded its work in D1 and settles it (outbox.ts); `queued_at` says when
    // its pointer was last handed to the queue (null: not yet).
    "ALTER TABLE _svc_outbox ADD COLUMN queued_at INTEGER",
    "CREATE INDEX _svc_outbox_unqueued ON _svc_outbox (id) WHERE queued_at IS NULL",
  ],
];

/** Live rows and the bytes of rows not purged, as the triggers keep them. */
export function readUsage(sql: SqlStorage): { liveRows: number; storedBytes: number } {
  const row = sql.exec<{ live_rows: number; stored_bytes: number }>("SELECT live_rows, stored_bytes FROM _svc_usage WHERE id = 1").one();
  return { liveRows: Number(row.live_rows), storedBytes: Number(row.stored_bytes) };
}

export function migrate(sql: SqlStorage): void {
  sql.exec(MIGRATIONS[0][0]);
  const row = sql.exec<{ value: string }>("SELECT value FROM _svc_meta WHERE key = 'schema_version'").toArray()[0];
  let version = row ? Number(row.value) : 0;
  while (version < SCHEMA_VERSION) {
    for (const statement of MIGRATIONS[version]) sql.exec(statement);
    version += 1;
    sql.exec("INSERT INTO _svc_meta (key, value) VALUES ('schema_version', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", String(version));
  }
}

export function readMeta(sql: SqlStorage, key: string): string | null {
  return sql.exec<{ value: string }>("SELECT value FROM _svc_meta WHERE key = ?", key).toArray()[0]?.value ?? null;
}

export function writeMeta(sql: SqlStorage, key: string, value: string | null): void {
  if (value === null) sql.exec("DELETE FROM _svc_meta WHERE key = ?", key);
  else sql.exec("INSERT INTO _svc_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", key, value);
}
