/**
 * AppStore: one Durable Object per app, owning its rows, unique index, change feed,
 * watchers and effect outbox (DESIGN §2). This first version only lays down its SQLite
 * schema version table inside blockConcurrencyWhile; the data plane fills it in.
 */
import { DurableObject } from "cloudflare:workers";

export const APP_STORE_SCHEMA_VERSION = 1;
/** The rows table the data plane keeps; usage() counts it once it exists. */
export const ROWS_TABLE = "_svc_rows";

export interface AppStoreUsage {
  rowCount: number;
  storageBytes: number;
}

export class AppStore extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.blockConcurrencyWhile(async () => {
      ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS _svc_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
      ctx.storage.sql.exec("INSERT OR IGNORE INTO _svc_meta (key, value) VALUES ('schema_version', ?)", String(APP_STORE_SCHEMA_VERSION));
    });
  }

  /** Live rows and bytes on disk, for the app detail record and quotas. */
  usage(): AppStoreUsage {
    const sql = this.ctx.storage.sql;
    const hasRows = sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", ROWS_TABLE).toArray().length > 0;
    const rowCount = hasRows ? Number(sql.exec<{ n: number }>(`SELECT count(*) AS n FROM ${ROWS_TABLE} WHERE deleted_at IS NULL`).one().n) : 0;
    return { rowCount, storageBytes: sql.databaseSize };
  }

  /** Purge: every row, feed entry and alarm of the app is gone for good. */
  async destroy(): Promise<void> {
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
  }

  /** The stored schema version; lets the Worker and tests confirm the store is initialised. */
  schemaVersion(): number {
    const row = this.ctx.storage.sql.exec<{ value: string }>("SELECT value FROM _svc_meta WHERE key = 'schema_version'").one();
    return Number(row.value);
  }
}
