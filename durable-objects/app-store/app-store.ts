/**
 * AppStore: one Durable Object per app, the single writer of its rows, unique index,
 * change feed and effect outbox (DESIGN §2–3). Its methods are thin RPC shells: each
 * loads the compiled manifest of the version the Worker names (cached per version, read
 * from D1 once), runs the operation in rows.ts inside one storage transaction, and after
 * commit wakes long-poll waiters. Failures travel back as plain `{ ok: false, error }`
 * results, because exception classes do not survive RPC.
 */
import { DurableObject } from "cloudflare:workers";
import { RelayError, type ErrorCode } from "../../src/errors";
import { config } from "../../src/config";
import { parseManifest, manifestLimitsFrom, type CompiledManifest } from "../../src/manifest";
import type { Principal } from "../../src/permissions";
import { migrate, readMeta, readUsage, SCHEMA_VERSION, writeMeta } from "./schema";
import { Rows, type DeletedRowView, type RowView, type WriteContext } from "./rows";
import { checkFeedCollections, pruneFeed, readFeed, resyncRequired, FEED_KEEP, type FeedEntry, type FeedPage } from "./feed";
import { backfillConflicts, reconcileUnique } from "./unique";
import type { EffectKind } from "../../src/rules/match";
import { retentionView, setOverride, sweep, sweepDue, type Axes, type RetentionView } from "./retention";
import { Watchers, type CloseReason, type SocketSelector } from "./watchers";
import { STALE_ACCESS, Withdrawals } from "./withdrawals";

export const ROWS_TABLE = "_svc_rows";
export const APP_STORE_SCHEMA_VERSION = SCHEMA_VERSION;

export interface AppStoreUsage {
  rowCount: number;
  storageBytes: number;
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: { code: ErrorCode; message: string; details?: Record<string, unknown> } };

/** What the Worker tells the store on every call: which app and version, and who asks. */
export interface CallContext {
  appId: string;
  version: number;
  principal: Principal;
  challenge?: WriteContext["challenge"];
  /**
   * When the Worker began reading who the caller is (ms since the epoch), on routes that
   * resend a call the store turns away: the store then refuses the call if the app has a
   * newer live version, or if a withdrawal reaching the principal was recorded since
   * (withdrawals.ts), answering STALE_ACCESS (withdrawals.ts) instead of acting on stale authority.
   */
  checkedAt?: number;
}

export interface BatchResult {
  results: { index: number; ok: boolean; key?: string; error?: { code: string; message: string; status: number; details?: Record<string, unknown> } }[];
  ok_count: number;
  error_count: number;
}

export interface BatchCreateInput {
  rows: { key?: string; data: unknown }[];
  on?: string;
  emitEffects?: boolean;
  suppress?: EffectKind[];
}

/**
 * Batches are silent by default (notify and webhooks suppressed, WIRE §2.3); `emitEffects`
 * or an explicit `suppress` list decide otherwise. Only the owner or its agent may quiet
 * effects; anyone else's batch fires them like single writes.
 */
export function batchSuppression(call: CallContext, input: Pick<BatchCreateInput, "emitEffects" | "suppress">): ReadonlySet<EffectKind> {
  if (call.principal.kind !== "owner" && call.principal.kind !== "agent") return new Set();
  if (input.emitEffects) return new Set();
  return new Set(input.suppress ?? ["notify", "webhooks"]);
}

/** How soon after a commit the outbox is handed to the effects queue. */
const OUTBOX_FLUSH_DELAY_MS = 1_000;
const OUTBOX_BATCH = 100;

const MAX_WAIT_MS = 30_000;
const SWEEP_EVERY_MS = 3_600_000;
/** The key-value entry a purged store keeps (see AppStore.purged). */
const PURGED_MARK = "purged_at";

function staleAccess(): RelayError {
  return new RelayError(STALE_ACCESS.code, "The app or your access to it changed while this request was being checked; nothing was done. Send it again.", { reason: STALE_ACCESS.reason });
}

function purgedApp(): RelayError {
  return new RelayError("app_not_found", "This app was purged.");
}

/**
 * The store's RPC surface as the Worker sees it. The class implements it, so the two
 * cannot drift; the Worker's stub is typed with it (workerd's generic RPC typing of
 * recursive JSON results is too deep for the compiler).
 */
export interface AppStoreApi {
  listRows(call: CallContext, collection: string, input: { where?: unknown; sort?: unknown; since?: string; limit: number }): Promise<Outcome<{ rows: RowView[]; next_cursor: string | null; has_more: boolean }>>;
  getRow(call: CallContext, collection: string, key: string): Promise<Outcome<RowView>>;
  countRows(call: CallContext, collection: string): Promise<Outcome<number>>;
  createRow(call: CallContext, collection: string, input: { data: unknown; key?: string; on?: string }): Promise<Outcome<{ row: RowView; deduped?: true; created: boolean }>>;
  updateRow(call: CallContext, collection: string, key: string, input: { data: unknown; if_match?: number }): Promise<Outcome<RowView>>;
  deleteRow(call: CallContext, collection: string, key: string, input: { if_match?: number }): Promise<Outcome<null>>;
  purgeRow(call: CallContext, collection: string, key: string): Promise<Outcome<null>>;
  restoreRow(call: CallContext, collection: string, key: string): Promise<Outcome<RowView>>;
  deletedRows(call: CallContext, collection: string, input: { before?: string; limit: number }): Promise<Outcome<{ rows: DeletedRowView[]; next_before: string | null }>>;
  batchCreate(call: CallContext, collection: string, input: BatchCreateInput): Promise<Outcome<BatchResult>>;
  batchDelete(call: CallContext, collection: string, keys: string[]): Promise<Outcome<BatchResult>>;
  feed(call: CallContext, since: number, limit: number, waitMs: number, collections?: string[]): Promise<Outcome<FeedPage>>;
  getRetention(call: CallContext, collection: string): Promise<Outcome<RetentionView>>;
  uniqueBackfillCheck(manifestJson: string): Promise<{ collection: string; field: string; value: string }[]>;
  seed(call: CallContext, rows: Record<string, { key?: string; data: unknown }[]>): Promise<Outcome<{ count: number }>>;
  setRetention(call: CallContext, collection: string, patch: Partial<Axes>): Promise<Outcome<RetentionView>>;
  usage(): Promise<AppStoreUsage>;
  destroy(): Promise<void>;
  schemaVersion(): Promise<number>;
  /**
   * Ends the app feed sockets — all (the app went dormant or suspended, its visibility
   * changed), or those `only` selects: one person's, one grant link's holders', one preview
   * token's viewers' (their access changed); returns how many.
   */
  closeWatchers(reason: CloseReason, only?: SocketSelector): Promise<number>;
  /** A redeploy made `version` live: calls checked against an older one are turned away (see CallContext.checkedAt). */
  advanceVersion(version: number): Promise<void>;
}

export class AppStore extends DurableObject<Env> implements AppStoreApi {
  private compiled: { version: number; manifest: CompiledManifest } | null = null;
  private readonly waiters = new Set<() => void>();
  /** The newest live version this store has been told of or loaded (cached `live_version`). */
  private live: number | undefined = undefined;
  private readonly withdrawals = new Withdrawals(() => this.ctx.storage.sql);
  /** The app feed sockets (watchers.ts); all their state lives in socket attachments. */
  private readonly watchers = new Watchers(this.ctx, {
    // Never older than the live version: a socket accepted before a redeploy is judged by the newer one.
    load: (appId, version) => this.manifest(appId, Math.max(version, this.liveVersion())),
    current: () => this.compiled,
    wakeBy: (at) => this.wakeBy(at),
    withdrawals: this.withdrawals,
  });

  /**
   * The app was purged: its store holds nothing but this mark (in the object's key-value
   * storage, outside the `_svc_` tables) and never builds its tables again, so a call that
   * was checked before the purge finds no app instead of starting a new store for it.
   */
  private purged: boolean;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.purged = ctx.storage.kv.get(PURGED_MARK) !== undefined;
    if (!this.purged) ctx.blockConcurrencyWhile(async () => migrate(ctx.storage.sql));
  }

  // ---- plumbing ----

  private async manifest(appId: string, version: number): Promise<CompiledManifest> {
    if (this.purged) throw purgedApp();
    // A version older than the live one is never served again: its unique fields and
    // schemas no longer hold, and reconciling its index would undo the newer one's.
    if (version < this.liveVersion()) throw staleAccess();
    if (this.compiled?.version === version) return this.compiled.manifest;
    const row = await this.env.DB.prepare("SELECT manifest_json FROM app_versions WHERE app_id = ?1 AND version = ?2")
      .bind(appId, version).first<{ manifest_json: string }>();
    if (!row) throw new RelayError("app_not_found", "This app has no such version.");
    const manifest = parseManifest(JSON.parse(row.manifest_json), manifestLimitsFrom(config(this.env)));
    this.compiled = { version, manifest };
    this.ctx.storage.transactionSync(() => reconcileUnique(this.ctx.storage.sql, manifest));
    writeMeta(this.ctx.storage.sql, "app_id", appId);
    // A call checked before a redeploy may still name the older version: never go back.
    this.advanceLive(version);
    if (sweepDue(manifest, this.ctx.storage.sql, config(this.env).limits.MAX_ROWS_PER_APP)) await this.ensureAlarm();
    return manifest;
  }

  private liveVersion(): number {
    this.live ??= Number(readMeta(this.ctx.storage.sql, "live_version") ?? "0");
    return this.live;
  }

  private advanceLive(version: number): void {
    if (version <= this.liveVersion()) return;
    writeMeta(this.ctx.storage.sql, "live_version", String(version));
    this.live = version;
  }

  /** Turns away a call whose access changed since the Worker checked it (CallContext.checkedAt). */
  private admit(call: CallContext): void {
    if (this.purged) throw purgedApp();
    if (call.checkedAt === undefined) return;
    if (call.version < this.liveVersion() || this.withdrawals.since(call.checkedAt, call.principal)) throw staleAccess();
  }

  private async rows(call: CallContext, suppressed: ReadonlySet<EffectKind> = new Set()): Promise<Rows> {
    const manifest = await this.manifest(call.appId, call.version);
    // Judged after the load: a withdrawal or redeploy may have arrived while it awaited D1.
    this.admit(call);
    const cfg = config(this.env);
    return new Rows(this.ctx.storage.sql, manifest, {
      maxRows: cfg.limits.MAX_ROWS_PER_APP, maxStorageBytes: cfg.limits.MAX_STORAGE_BYTES_PER_APP,
    }, suppressed);
  }

  private writeContext(call: CallContext): WriteContext {
    return { principal: call.principal, challenge: call.challenge ?? "absent", now: new Date().toISOString() };
  }

  private async run<T>(work: () => Promise<T> | T): Promise<Outcome<T>> {
    try {
      return { ok: true, value: await work() };
    } catch (err) {
      if (err instanceof RelayError) return { ok: false, error: { code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) } };
      throw err;
    }
  }

  /** Runs one write in a transaction; on commit, wakes whoever waits for the feed. */
  private write<T>(work: (feed: FeedEntry[]) => T): T {
    const feed: FeedEntry[] = [];
    const result = this.ctx.storage.transactionSync(() => work(feed));
    if (feed.length) this.afterCommit(feed);
    return result;
  }

  private afterCommit(entries: FeedEntry[]): void {
    for (const wake of this.waiters) wake();
    this.waiters.clear();
    this.watchers.afterCommit(entries, () => this.compiled);
    if (entries.length && this.outboxPending()) void this.wakeBy(Date.now() + OUTBOX_FLUSH_DELAY_MS);
    // Every thousandth entry, make sure the sweep will come to prune the feed.
    if (entries.some((e) => e.seq % 1000 === 0)) void this.ensureAlarm();
    // A soft delete leaves a tombstone the sweep must drop once the restore window closes.
    else if (entries.some((e) => e.op === "delete" && !e.purged)) void this.ensureAlarm();
  }

  // ---- rows ----

  async listRows(call: CallContext, collection: string, input: { where?: unknown; sort?: unknown; since?: string; limit: number }) {
    return this.run(async () => (await this.rows(call)).list(call.principal, collection, input));
  }

  async getRow(call: CallContext, collection: string, key: string): Promise<Outcome<RowView>> {
    return this.run(async () => (await this.rows(call)).get(call.principal, collection, key));
  }

  async countRows(call: CallContext, collection: string): Promise<Outcome<number>> {
    return this.run(async () => (await this.rows(call)).count(call.principal, collection));
  }

  async createRow(call: CallContext, collection: string, input: { data: unknown; key?: string; on?: string }) {
    return this.run(async () => {
      const rows = await this.rows(call);
      return this.write((feed) => rows.create(this.writeContext(call), collection, input, feed));
    });
  }

  async updateRow(call: CallContext, collection: string, key: string, input: { data: unknown; if_match?: number }): Promise<Outcome<RowView>> {
    return this.run(async () => {
      const rows = await this.rows(call);
      return this.write((feed) => rows.update(this.writeContext(call), collection, key, input, feed));
    });
  }

  async deleteRow(call: CallContext, collection: string, key: string, input: { if_match?: number }): Promise<Outcome<null>> {
    return this.run(async () => {
      const rows = await this.rows(call);
      this.write((feed) => rows.remove(this.writeContext(call), collection, key, input, feed));
      return null;
    });
  }

  async purgeRow(call: CallContext, collection: string, key: string): Promise<Outcome<null>> {
    return this.run(async () => {
      const rows = await this.rows(call);
      this.write((feed) => rows.purge(this.writeContext(call), collection, key, feed));
      return null;
    });
  }

  async restoreRow(call: CallContext, collection: string, key: string): Promise<Outcome<RowView>> {
    return this.run(async () => {
      const rows = await this.rows(call);
      return this.write((feed) => rows.restore(this.writeContext(call), collection, key, feed));
    });
  }

  async deletedRows(call: CallContext, collection: string, input: { before?: string; limit: number }): Promise<Outcome<{ rows: DeletedRowView[]; next_before: string | null }>> {
    return this.run(async () => (await this.rows(call)).deleted(call.principal, collection, input));
  }

  /**
   * Per-row results; a bad row never aborts the others (each row is its own transaction).
   * An undeclared collection is not a bad row: the whole call answers collection_not_found.
   */
  async batchCreate(call: CallContext, collection: string, input: BatchCreateInput): Promise<Outcome<BatchResult>> {
    return this.run(async () => {
      const rows = await this.rows(call, batchSuppression(call, input));
      await this.requireCollection(call, collection);
      return this.batch(input.rows.map((row) => () => {
        const created = this.write((feed) => rows.create(this.writeContext(call), collection, { ...row, ...(input.on ? { on: input.on } : {}) }, feed));
        return created.row.key;
      }));
    });
  }

  async batchDelete(call: CallContext, collection: string, keys: string[]): Promise<Outcome<BatchResult>> {
    return this.run(async () => {
      const rows = await this.rows(call);
      await this.requireCollection(call, collection);
      return this.batch(keys.map((key) => () => {
        this.write((feed) => rows.remove(this.writeContext(call), collection, key, {}, feed));
        return key;
      }));
    });
  }

  private async requireCollection(call: CallContext, collection: string): Promise<void> {
    const manifest = await this.manifest(call.appId, call.version);
    if (!Object.hasOwn(manifest.collections, collection)) throw new RelayError("collection_not_found", `This app declares no collection "${collection}".`, { collection });
  }

  private batch(items: (() => string)[]): BatchResult {
    const results: BatchResult["results"] = items.map((item, index) => {
      try {
        return { index, ok: true, key: item() };
      } catch (err) {
        if (!(err instanceof RelayError)) throw err;
        return { index, ok: false, error: { code: err.code, message: err.message, status: err.status, ...(err.details ? { details: err.details } : {}) } };
      }
    });
    const okCount = results.filter((r) => r.ok).length;
    return { results, ok_count: okCount, error_count: results.length - okCount };
  }

  // ---- feed ----

  /**
   * Entries after `since`, holding the call open up to `waitMs` when caught up. Entries
   * are filtered to what the principal may read, and to `collections` when given.
   */
  async feed(call: CallContext, since: number, limit: number, waitMs: number, collections?: string[]): Promise<Outcome<FeedPage>> {
    return this.run(async () => {
      const rows = await this.rows(call);
      checkFeedCollections(await this.manifest(call.appId, call.version), collections);
      const deadline = Date.now() + Math.min(Math.max(waitMs, 0), MAX_WAIT_MS);
      for (;;) {
        const page = readFeed(this.ctx.storage.sql, since, limit, collections);
        if ("resync" in page) throw resyncRequired(since, page);
        const visible = { ...page, entries: rows.visibleEntries(call.principal, page.entries) };
        const remaining = deadline - Date.now();
        if (page.entries.length > 0 || remaining <= 0) return visible;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => { this.waiters.delete(wake); resolve(); }, remaining);
          const wake = () => { clearTimeout(timer); resolve(); };
          this.waiters.add(wake);
        });
      }
    });
  }

  // ---- deploy-time ----

  /** Live rows that a redeploy to `manifestJson` would leave sharing a newly unique value. */
  async uniqueBackfillCheck(manifestJson: string): Promise<{ collection: string; field: string; value: string }[]> {
    const manifest = parseManifest(JSON.parse(manifestJson), manifestLimitsFrom(config(this.env)));
    return backfillConflicts(this.ctx.storage.sql, manifest);
  }

  /** Starter rows of a new app (`input_data`), all in one transaction: every row or none. */
  async seed(call: CallContext, rows: Record<string, { key?: string; data: unknown }[]>): Promise<Outcome<{ count: number }>> {
    return this.run(async () => {
      const store = await this.rows(call);
      const now = new Date().toISOString();
      return this.write((feed) => {
        let count = 0;
        for (const [collection, list] of Object.entries(rows)) {
          list.forEach((row, index) => {
            try {
              store.seed(collection, row, now, feed);
            } catch (err) {
              if (err instanceof RelayError) {
                throw new RelayError(err.code === "row_schema_violation" ? "input_schema_violation" : err.code, `input_data.${collection}.${index}: ${err.message}`,
                  { ...err.details, path: `input_data.${collection}.${index}` });
              }
              throw err;
            }
            count += 1;
          });
        }
        return { count };
      });
    });
  }

  // ---- retention ----

  private ownerOnly(call: CallContext): void {
    if (call.principal.kind !== "owner" && call.principal.kind !== "agent") {
      throw new RelayError("forbidden", "Only the app's owner or its agent may read or change retention.");
    }
  }

  async getRetention(call: CallContext, collection: string): Promise<Outcome<RetentionView>> {
    return this.run(async () => {
      this.ownerOnly(call);
      const manifest = await this.manifest(call.appId, call.version);
      this.admit(call);
      if (!Object.hasOwn(manifest.collections, collection)) throw new RelayError("collection_not_found", `This app declares no collection "${collection}".`);
      return retentionView(manifest, this.ctx.storage.sql, collection, config(this.env).limits.MAX_ROWS_PER_APP);
    });
  }

  async setRetention(call: CallContext, collection: string, patch: Partial<Axes>): Promise<Outcome<RetentionView>> {
    return this.run(async () => {
      this.ownerOnly(call);
      const manifest = await this.manifest(call.appId, call.version);
      this.admit(call);
      if (!Object.hasOwn(manifest.collections, collection)) throw new RelayError("collection_not_found", `This app declares no collection "${collection}".`);
      setOverride(this.ctx.storage.sql, collection, patch);
      await this.ensureAlarm();
      return retentionView(manifest, this.ctx.storage.sql, collection, config(this.env).limits.MAX_ROWS_PER_APP);
    });
  }

  /** Whether any effect waits for the queue (an existence probe: the outbox may be long while the queue is down). */
  private outboxPending(): boolean {
    return this.ctx.storage.sql.exec("SELECT 1 FROM _svc_outbox LIMIT 1").toArray().length > 0;
  }

  /** Moves the alarm to `at` (ms since the epoch) unless it is already due by then. */
  private async wakeBy(at: number): Promise<void> {
    const set = await this.ctx.storage.getAlarm();
    if (set === null || set > at) await this.ctx.storage.setAlarm(at);
  }

  /**
   * Hands recorded effects to the effects queue, oldest first, deleting each batch only
   * after the queue accepted it (delivery is at least once; consumers dedupe by id).
   */
  private async flushOutbox(appId: string): Promise<void> {
    const sql = this.ctx.storage.sql;
    for (;;) {
      const batch = sql.exec<{ id: number; kind: string; rule_id: string; payload: string }>(
        "SELECT id, kind, rule_id, payload FROM _svc_outbox ORDER BY id LIMIT ?", OUTBOX_BATCH,
      ).toArray();
      if (batch.length === 0) return;
      await this.env.EFFECTS.sendBatch(batch.map((e) => ({
        body: { outbox_id: `${appId}:${e.id}`, app_id: appId, kind: e.kind, rule_id: e.rule_id, change: JSON.parse(e.payload) },
      })));
      sql.exec("DELETE FROM _svc_outbox WHERE id <= ?", batch[batch.length - 1].id);
    }
  }

  /** A sweep within the hour (an alarm set further out, for a socket's expiry days away, is moved up). */
  private async ensureAlarm(): Promise<void> {
    await this.wakeBy(Date.now() + SWEEP_EVERY_MS);
  }

  /**
   * The alarm: closes feed sockets whose credential ran out, hands the outbox to the queue,
   * and sweeps rows over their retention bounds, tombstones past the restore window and feed
   * entries beyond the kept window. It is set again for whichever comes first: the next
   * socket expiry, or the next sweep while one is due.
   */
  override async alarm(): Promise<void> {
    if (this.purged) return;
    const nextExpiry = this.watchers.closeExpired();
    const nextSweep = await this.sweepAll();
    const next = Math.min(nextExpiry ?? Infinity, nextSweep ?? Infinity);
    if (Number.isFinite(next)) await this.wakeBy(next);
  }

  /** One sweep of the app's store; answers when the next is due, or null when nothing will be. */
  private async sweepAll(): Promise<number | null> {
    const sql = this.ctx.storage.sql;
    const appId = readMeta(sql, "app_id");
    const version = this.liveVersion();
    if (!appId || !version) return null;
    await this.flushOutbox(appId);
    const manifest = await this.manifest(appId, version);
    const maxRows = config(this.env).limits.MAX_ROWS_PER_APP;
    const pruned = this.ctx.storage.transactionSync(() => sweep(manifest, sql, maxRows));
    const feedMoved = pruneFeed(sql);
    if (pruned > 0 || feedMoved) this.afterCommit([]);
    const feedSize = Number(sql.exec<{ n: number }>("SELECT count(*) AS n FROM _svc_feed").one().n);
    return sweepDue(manifest, sql, maxRows) || feedSize > FEED_KEEP ? Date.now() + SWEEP_EVERY_MS : null;
  }

  // ---- app-level ----

  /** Live rows and bytes on disk, for the app detail record and quotas. */
  async usage(): Promise<AppStoreUsage> {
    const sql = this.ctx.storage.sql;
    // A purged store has no tables at all (and must not get them back just by being asked).
    const hasRows = sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", ROWS_TABLE).toArray().length > 0;
    const rowCount = hasRows ? readUsage(sql).liveRows : 0;
    return { rowCount, storageBytes: hasRows ? sql.databaseSize : 0 };
  }

  /** Purge: every row, feed entry and alarm of the app is gone for good. */
  async destroy(): Promise<void> {
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    this.ctx.storage.kv.put(PURGED_MARK, Date.now());
    this.purged = true;
    this.compiled = null;
    this.live = undefined;
    this.withdrawals.forget();
  }

  // ---- app feed sockets (watchers.ts) ----

  /** The Worker forwards `/_svc/ws` upgrades here, with the caller resolved in an internal header. */
  override async fetch(request: Request): Promise<Response> {
    return this.watchers.connect(request);
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    await this.watchers.message(ws, message);
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    this.watchers.close(ws, code, reason);
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    this.watchers.error(ws);
  }

  async closeWatchers(reason: CloseReason, only?: SocketSelector): Promise<number> {
    if (this.purged) return 0;
    return this.watchers.closeAll(reason, only);
  }

  async advanceVersion(version: number): Promise<void> {
    if (!this.purged && Number.isSafeInteger(version)) this.advanceLive(version);
  }

  /** The stored schema version; lets the Worker and tests confirm the store is initialised. */
  async schemaVersion(): Promise<number> {
    return Number(readMeta(this.ctx.storage.sql, "schema_version"));
  }
}
