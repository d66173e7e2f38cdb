/**
 * AppStore: one Durable Object per app, owning its rows, unique index, change feed,
 * watchers and effect outbox (DESIGN §2). This first version only lays down its SQLite
 * schema version table inside blockConcurrencyWhile; the data plane fills it in.
 */
import { DurableObject } from "cloudflare:workers";

export const APP_STORE_SCHEMA_VERSION = 1;

export class AppStore extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.blockConcurrencyWhile(async () => {
      ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS _svc_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
      ctx.storage.sql.exec("INSERT OR IGNORE INTO _svc_meta (key, value) VALUES ('schema_version', ?)", String(APP_STORE_SCHEMA_VERSION));
    });
  }

  /** The stored schema version; lets the Worker and tests confirm the store is initialised. */
  schemaVersion(): number {
    const row = this.ctx.storage.sql.exec<{ value: string }>("SELECT value FROM _svc_meta WHERE key = 'schema_version'").one();
    return Number(row.value);
  }
}
