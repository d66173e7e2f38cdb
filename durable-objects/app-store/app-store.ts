/**
 * AppStore: one Durable Object per app, the single writer of its rows, unique index,
 * change feed and effect outbox (DESIGN §2–3). This class is the RPC surface of
 * contract.ts and nothing more: each method opens the store for the call (the compiled
 * manifest of the version the Worker names, the call admitted against access changed
 * since it was checked), runs one verb of a room below inside one storage transaction
 * (single-row writes share theirs with the writes that arrive with them, each in a
 * savepoint of its own: group-commit.ts), and after commit hands the new feed entries to
 * the waiters and sockets and records the due work. Failures travel back as Outcomes, because exception classes do not survive RPC.
 *
 * The rooms: rows-scope.ts and its siblings (the row verbs: reads, writes, removals, starter and imported rows), visibility.ts (who sees what), query.ts (SQL), feed.ts,
 * watchers.ts (sockets), withdrawals.ts (access taken away), outbox.ts (effects),
 * retention.ts and unique.ts (sweeps and the unique index), alarms.ts (due work),
 * manifests.ts (the compiled manifest and the one D1 read), schema.ts (tables).
 */
import { DurableObject } from "cloudflare:workers";
import { holdSqlToProductionLimits, withProductionLimits } from "../../src/db/production-limits";
import { RelayError } from "../../src/errors";
import { config } from "../../src/config";
import { declaredCollection } from "../../src/manifest";
import { isOwnerOrAgent, machineAuthor } from "../../src/permissions";
import type { CompiledManifest } from "../../src/manifest";
import type { EffectKind } from "../../src/rules/match";
import {
  attempt, failureOf, readSocketUpgrade, settle, socketRefused, staleAccess, SOCKET_PROTOCOL,
  type AppStoreApi, type AppStoreUsage, type BatchCreateInput, type BatchItem, type CallContext, type CloseReason, type DeletedRowView,
  type FeedPage, type HookWriteCall, type PortablePage, type PortableRow, type HookWriteInput, type OutboxEntryView, type Outcome, type RetentionAxes, type RetentionView, type RowPage, type RowView, type SocketSelector,
} from "./contract";
import { migrate, readMeta, readUsage } from "./schema";
import type { RowScope, WriteContext } from "./rows-scope";
import * as rowReads from "./rows-read";
import * as rowWrites from "./rows-write";
import * as rowRemovals from "./rows-remove";
import * as rowPlacement from "./rows-place";
import { pruneFeed, readFeed, resyncRequired, FEED_KEEP, type HeldEntry } from "./feed";
import { visibleEntries } from "./visibility";
import { backfillConflicts } from "./unique";
import { retentionView, setOverride, sweep, sweepDue } from "./retention";
import { Watchers } from "./watchers";
import { Withdrawals } from "./withdrawals";
import { batchSuppression, EagerFlush, flushOutbox, outboxEntries, outboxPending, settleOutbox, unsettledForRehand, OUTBOX_FLUSH_DELAY_MS } from "./outbox";
import { DueWork } from "./alarms";
import { exportPage } from "./portable";
import { compileManifest, Manifests } from "./manifests";
import { GroupCommit } from "./group-commit";
import { errorLogLine } from "../../src/db/query-errors";

const ROWS_TABLE = "_svc_rows";
const MAX_WAIT_MS = 30_000;
const SWEEP_EVERY_MS = 3_600_000;
/** The key-value entry a purged store keeps (see AppStore.purged). */
const PURGED_MARK = "purged_at";

function purgedApp(): RelayError {
  return new RelayError("app_not_found", "This app was purged.");
}

export class AppStore extends DurableObject<Env> implements AppStoreApi {
  private readonly waiters = new Set<() => void>();
  private readonly manifests = new Manifests(this.ctx.storage, this.env.DB, () => config(this.env));
  private readonly due = new DueWork(this.ctx.storage);
  /** Hands new outbox entries to the queue right after their commit (the alarm is the safety net). */
  private readonly eagerFlush = new EagerFlush(() => this.flush());
  private readonly withdrawals = new Withdrawals(() => this.ctx.storage.sql);
  /** Single-row writes arriving together share one transaction (group-commit.ts). */
  private readonly commits = new GroupCommit(this.ctx.storage, (feed) => this.afterCommit(feed));
  /** The app feed sockets (watchers.ts); all their state lives in socket attachments. */
  private readonly watchers = new Watchers(this.ctx, {
    // Never older than the live version: a socket accepted before a redeploy is judged by the newer one.
    load: (appId, version) => this.manifest(appId, Math.max(version, this.manifests.liveVersion())),
    current: () => this.manifests.current,
    expiresBy: (at) => this.due.dueBy("expiry", at),
    withdrawals: this.withdrawals,
  });

  /**
   * The app was purged: its store holds nothing but this mark (in the object's key-value
   * storage, outside the `_svc_` tables) and never builds its tables again, so a call that
   * was checked before the purge finds no app instead of starting a new store for it.
   */
  private purged: boolean;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, withProductionLimits(env));
    holdSqlToProductionLimits(env, ctx.storage.sql);
    this.purged = ctx.storage.kv.get(PURGED_MARK) !== undefined;
    if (!this.purged) {
      ctx.blockConcurrencyWhile(async () => {
        migrate(ctx.storage.sql);
        // Entries handed to the queue but never settled may have died with the process that
        // held them (a local queue lives in memory): hand them over again now, not in 15 minutes.
        if (unsettledForRehand(ctx.storage.sql)) await this.due.dueBy("flush", Date.now());
        // Whatever work is still due gets its alarm back, even if the last alarm failed for good.
        await this.due.arm();
      });
    }
  }

  // ---- opening the store for a call ----

  private async manifest(appId: string, version: number): Promise<CompiledManifest> {
    if (this.purged) throw purgedApp();
    const { manifest, fresh } = await this.manifests.load(appId, version);
    if (fresh && sweepDue(manifest, this.ctx.storage.sql, config(this.env).limits.MAX_ROWS_PER_APP)) await this.sweepWithin();
    return manifest;
  }

  /** Turns away a call whose access changed since the Worker checked it (CallContext.checkedAt). */
  private admit(call: CallContext): void {
    if (this.purged) throw purgedApp();
    if (call.checkedAt === undefined) return;
    if (call.version < this.manifests.liveVersion() || this.withdrawals.since(call.checkedAt, call.principal)) throw staleAccess();
  }

  /** The manifest of the call's version, the call admitted after the load (a withdrawal or redeploy may have arrived while it awaited D1). */
  private async open(call: CallContext): Promise<CompiledManifest> {
    const manifest = await this.manifest(call.appId, call.version);
    this.admit(call);
    return manifest;
  }

  private rowsOf(manifest: CompiledManifest, suppressed: ReadonlySet<EffectKind> = new Set()): RowScope {
    const { limits } = config(this.env);
    return { sql: this.ctx.storage.sql, manifest, limits: { maxRows: limits.MAX_ROWS_PER_APP, maxStorageBytes: limits.MAX_STORAGE_BYTES_PER_APP }, suppressed };
  }

  private async rows(call: CallContext): Promise<RowScope> {
    return this.rowsOf(await this.open(call));
  }

  private writeContext(call: CallContext): WriteContext {
    return { principal: call.principal, challenge: call.challenge ?? "absent", now: new Date().toISOString() };
  }

  /** Runs one write in a transaction; on commit, hands its feed entries on. */
  private write<T>(work: (feed: HeldEntry[]) => T): T {
    const feed: HeldEntry[] = [];
    const result = this.ctx.storage.transactionSync(() => work(feed));
    if (feed.length) this.afterCommit(feed);
    return result;
  }

  /**
   * A single-row write, applied with the others that arrive with it (group-commit.ts). The
   * call is admitted again when its turn comes: a redeploy or a withdrawal may have come
   * in while it waited.
   */
  private grouped<T>(call: CallContext, work: (feed: HeldEntry[]) => T): Promise<T> {
    return this.commits.submit((feed) => {
      this.admit(call);
      return work(feed);
    });
  }

  /** After a commit: wake long-poll waiters, push to sockets, and record the work the commit left due. */
  private afterCommit(entries: HeldEntry[]): void {
    for (const wake of this.waiters) wake();
    this.waiters.clear();
    this.watchers.afterCommit(entries);
    if (entries.length && outboxPending(this.ctx.storage.sql)) {
      void this.due.dueBy("flush", Date.now() + OUTBOX_FLUSH_DELAY_MS);
      this.ctx.waitUntil(this.eagerFlush.request());
    }
    // Every thousandth entry, make sure the sweep will come (the feed trims itself as it
    // grows, feed.ts, but past days' write budgets wait for the sweep); a soft delete leaves
    // a tombstone the sweep must drop once the restore window closes.
    if (entries.some(({ entry }) => entry.seq % 1000 === 0 || (entry.op === "delete" && !entry.purged))) void this.sweepWithin();
  }

  /** A sweep within the hour. */
  private sweepWithin(): Promise<void> {
    return this.due.dueBy("sweep", Date.now() + SWEEP_EVERY_MS);
  }

  // ---- rows ----

  async listRows(call: CallContext, collection: string, input: { where?: unknown; sort?: unknown; since?: string; limit: number }): Promise<Outcome<RowPage>> {
    return attempt(async () => rowReads.list(await this.rows(call), call.principal, collection, input));
  }

  async getRow(call: CallContext, collection: string, key: string): Promise<Outcome<RowView>> {
    return attempt(async () => rowReads.get(await this.rows(call), call.principal, collection, key));
  }

  async countRows(call: CallContext, collection: string): Promise<Outcome<number>> {
    return attempt(async () => rowReads.count(await this.rows(call), call.principal, collection));
  }

  async createRow(call: CallContext, collection: string, input: { data: unknown; key?: string; on?: string }) {
    return attempt(async () => {
      const rows = await this.rows(call);
      return this.grouped(call, (feed) => rowWrites.create(rows, this.writeContext(call), collection, input, feed));
    });
  }

  async updateRow(call: CallContext, collection: string, key: string, input: { data: unknown; if_match?: number }): Promise<Outcome<RowView>> {
    return attempt(async () => {
      const rows = await this.rows(call);
      return this.grouped(call, (feed) => rowWrites.update(rows, this.writeContext(call), collection, key, input, feed));
    });
  }

  async deleteRow(call: CallContext, collection: string, key: string, input: { if_match?: number }): Promise<Outcome<null>> {
    return attempt(async () => {
      const rows = await this.rows(call);
      await this.grouped(call, (feed) => rowRemovals.remove(rows, this.writeContext(call), collection, key, input, feed));
      return null;
    });
  }

  async purgeRow(call: CallContext, collection: string, key: string): Promise<Outcome<null>> {
    return attempt(async () => {
      const rows = await this.rows(call);
      this.write((feed) => rowRemovals.purge(rows, this.writeContext(call), collection, key, feed));
      return null;
    });
  }

  async restoreRow(call: CallContext, collection: string, key: string): Promise<Outcome<RowView>> {
    return attempt(async () => {
      const rows = await this.rows(call);
      return this.write((feed) => rowRemovals.restore(rows, this.writeContext(call), collection, key, feed));
    });
  }

  async deletedRows(call: CallContext, collection: string, input: { before?: string; limit: number }): Promise<Outcome<{ rows: DeletedRowView[]; next_before: string | null }>> {
    return attempt(async () => rowReads.listDeleted(await this.rows(call), call.principal, collection, input));
  }

  /** Each row is its own transaction, so a bad row never aborts the others. */
  async batchCreate(call: CallContext, collection: string, input: BatchCreateInput): Promise<Outcome<BatchItem[]>> {
    return attempt(async () => {
      const manifest = await this.open(call);
      declaredCollection(manifest, collection);
      const rows = this.rowsOf(manifest, batchSuppression(call, input));
      return this.batch(input.rows, (row) => {
        const created = this.write((feed) => rowWrites.create(rows, this.writeContext(call), collection, { ...row, ...(input.on ? { on: input.on } : {}) }, feed));
        return created.row.key;
      });
    });
  }

  async batchDelete(call: CallContext, collection: string, keys: string[]): Promise<Outcome<BatchItem[]>> {
    return attempt(async () => {
      const manifest = await this.open(call);
      declaredCollection(manifest, collection);
      const rows = this.rowsOf(manifest);
      return this.batch(keys, (key) => {
        this.write((feed) => rowRemovals.remove(rows, this.writeContext(call), collection, key, {}, feed));
        return key;
      });
    });
  }

  /** Writes each item in turn, each in its own transaction; a refused item is its own failure. */
  private batch<T>(items: T[], write: (item: T) => string): BatchItem[] {
    return items.map((item, index) => ({ index, ...settle(() => write(item)) }));
  }

  // ---- inbound hooks ----

  async hookWrite(call: HookWriteCall, collection: string, input: HookWriteInput): Promise<Outcome<{ row: RowView; created: boolean }>> {
    return attempt(async () => {
      const rows = this.rowsOf(await this.manifest(call.appId, call.version), new Set(call.suppress ?? []));
      const now = new Date().toISOString();
      return this.write((feed) => rowWrites.hookWrite(rows, machineAuthor("hook", call.hook), collection, input, now, feed));
    });
  }

  // ---- feed ----

  /**
   * Entries after `since`, holding the call open up to `waitMs` when caught up. Entries
   * are filtered to what the principal may read, and to `collections` when given.
   */
  async feed(call: CallContext, since: number, limit: number, waitMs: number, collections?: string[]): Promise<Outcome<FeedPage>> {
    return attempt(async () => {
      const manifest = await this.open(call);
      for (const name of collections ?? []) declaredCollection(manifest, name);
      const deadline = Date.now() + Math.min(Math.max(waitMs, 0), MAX_WAIT_MS);
      for (;;) {
        const page = readFeed(this.ctx.storage.sql, since, limit, collections);
        if ("resync" in page) throw resyncRequired(since, page);
        const remaining = deadline - Date.now();
        if (page.entries.length > 0 || remaining <= 0) {
          return { entries: visibleEntries(this.ctx.storage.sql, manifest, call.principal, page.entries), cursor: page.cursor, truncated: page.truncated };
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => { this.waiters.delete(wake); resolve(); }, remaining);
          const wake = () => { clearTimeout(timer); resolve(); };
          this.waiters.add(wake);
        });
      }
    });
  }

  // ---- deploy-time ----

  async uniqueBackfillCheck(manifestJson: string): Promise<{ collection: string; field: string; value: string }[]> {
    return backfillConflicts(this.ctx.storage.sql, compileManifest(manifestJson, config(this.env)));
  }

  async seed(call: CallContext, rows: Record<string, { key?: string; data: unknown }[]>): Promise<Outcome<{ count: number }>> {
    return attempt(async () => {
      const store = await this.rows(call);
      const now = new Date().toISOString();
      return this.write((feed) => {
        let count = 0;
        for (const [collection, list] of Object.entries(rows)) {
          list.forEach((row, index) => {
            try {
              rowPlacement.seed(store, collection, row, now, feed);
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

  // ---- export and import (src/apps/archive) ----

  private requireOwnerOrAgent(call: CallContext, what: string): void {
    if (!isOwnerOrAgent(call.principal)) throw new RelayError("forbidden", `Only the app's owner or its agent may ${what}.`);
  }

  async exportRows(call: CallContext, after: number, limit: number): Promise<Outcome<PortablePage>> {
    return attempt(async () => {
      this.requireOwnerOrAgent(call, "export its rows");
      await this.open(call);
      return exportPage(this.ctx.storage.sql, after, limit);
    });
  }

  async importRows(call: CallContext, rows: PortableRow[]): Promise<Outcome<{ count: number }>> {
    return attempt(async () => {
      this.requireOwnerOrAgent(call, "import rows");
      const store = await this.rows(call);
      const now = new Date().toISOString();
      return this.write((feed) => {
        for (const row of rows) rowPlacement.place(store, row, now, feed);
        return { count: rows.length };
      });
    });
  }

  // ---- retention ----

  /** The manifest and collection a retention call names, for the owner or its agent only. */
  private async retentionTarget(call: CallContext, collection: string): Promise<CompiledManifest> {
    this.requireOwnerOrAgent(call, "read or change retention");
    const manifest = await this.open(call);
    declaredCollection(manifest, collection);
    return manifest;
  }

  async getRetention(call: CallContext, collection: string): Promise<Outcome<RetentionView>> {
    return attempt(async () => {
      const manifest = await this.retentionTarget(call, collection);
      return retentionView(manifest, this.ctx.storage.sql, collection, config(this.env).limits.MAX_ROWS_PER_APP);
    });
  }

  async setRetention(call: CallContext, collection: string, patch: Partial<RetentionAxes>): Promise<Outcome<RetentionView>> {
    return attempt(async () => {
      const manifest = await this.retentionTarget(call, collection);
      setOverride(this.ctx.storage.sql, collection, patch);
      await this.sweepWithin();
      return retentionView(manifest, this.ctx.storage.sql, collection, config(this.env).limits.MAX_ROWS_PER_APP);
    });
  }

  // ---- due work (alarms.ts) ----

  /**
   * The alarm: closes feed sockets whose credential ran out, hands the outbox to the queue,
   * and sweeps rows over their retention bounds, tombstones past the restore window and
   * feed entries beyond the kept window; each job says when it is due again.
   */
  override async alarm(): Promise<void> {
    if (this.purged) return;
    try {
      await this.due.ring({
        expiry: () => this.watchers.closeExpired(),
        flush: async () => {
          await this.eagerFlush.settled();
          return this.flush();
        },
        sweep: () => this.sweep(),
      });
    } catch (err) {
      console.error("app store: the alarm failed", errorLogLine(err));
    }
  }

  private async flush(): Promise<number | null> {
    const appId = readMeta(this.ctx.storage.sql, "app_id");
    return appId ? flushOutbox(this.ctx.storage.sql, this.env.EFFECTS, appId) : null;
  }

  /** One sweep of the app's store; answers when the next is due, or null when nothing will be. */
  private async sweep(): Promise<number | null> {
    const sql = this.ctx.storage.sql;
    const appId = readMeta(sql, "app_id");
    const version = this.manifests.liveVersion();
    if (!appId || !version) return null;
    const manifest = await this.manifest(appId, version);
    const maxRows = config(this.env).limits.MAX_ROWS_PER_APP;
    const pruned = this.ctx.storage.transactionSync(() => sweep(manifest, sql, maxRows));
    const feedMoved = pruneFeed(sql);
    if (pruned > 0 || feedMoved) this.afterCommit([]);
    const feedSize = Number(sql.exec<{ n: number }>("SELECT count(*) AS n FROM _svc_feed").one().n);
    return sweepDue(manifest, sql, maxRows) || feedSize > FEED_KEEP ? Date.now() + SWEEP_EVERY_MS : null;
  }

  // ---- app-level ----

  async usage(): Promise<AppStoreUsage> {
    const sql = this.ctx.storage.sql;
    // A purged store has no tables at all (and must not get them back just by being asked).
    const hasRows = sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", ROWS_TABLE).toArray().length > 0;
    const rowCount = hasRows ? readUsage(sql).liveRows : 0;
    return { rowCount, storageBytes: hasRows ? sql.databaseSize : 0 };
  }

  async outboxEntries(entryIds: number[]): Promise<OutboxEntryView[]> {
    if (this.purged) return [];
    return outboxEntries(this.ctx.storage.sql, entryIds);
  }

  async settleOutbox(entryIds: number[]): Promise<void> {
    if (this.purged) return;
    settleOutbox(this.ctx.storage.sql, entryIds);
  }

  async destroy(): Promise<void> {
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    this.ctx.storage.kv.put(PURGED_MARK, Date.now());
    this.purged = true;
    this.manifests.forget();
    this.withdrawals.forget();
  }

  async advanceVersion(version: number): Promise<void> {
    if (!this.purged && Number.isSafeInteger(version)) this.manifests.advanceLive(version);
  }

  async schemaVersion(): Promise<number> {
    return Number(readMeta(this.ctx.storage.sql, "schema_version"));
  }

  // ---- app feed sockets (watchers.ts) ----

  /** The Worker forwards `/_svc/ws` upgrades here (contract.ts `socketUpgrade`), the caller resolved in the hand-off. */
  override async fetch(request: Request): Promise<Response> {
    const handoff = readSocketUpgrade(request);
    if (!handoff) return socketRefused(failureOf(new RelayError("invalid_request", "This endpoint takes a socket upgrade forwarded by the Worker.")));
    const accepted = await this.watchers.connect(handoff);
    if (!accepted.ok) return socketRefused(accepted.error);
    return new Response(null, { status: 101, webSocket: accepted.value, headers: { "Sec-WebSocket-Protocol": SOCKET_PROTOCOL } });
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    try {
      await this.watchers.message(ws, message);
    } catch (err) {
      console.error("app store: a socket frame failed", errorLogLine(err));
      this.watchers.error(ws);
    }
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
}
