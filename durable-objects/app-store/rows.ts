/**
 * The row verbs of one app — get, list, count, the deleted list, create, update, delete,
 * purge, restore and starter rows — run inside the AppStore's single-writer storage. Each
 * write is one synchronous SQLite transaction (the caller opens it): permission (the pure
 * engine in src/permissions), schema, size, serverSet, unique, quotas and the anonymous
 * budget are checked, then the row, its unique slots, its feed entry and its effects in
 * the outbox are written together — or nothing is. Failures are thrown as RelayError;
 * the AppStore turns them into Outcomes at the RPC edge.
 */
import { RelayError } from "../../src/errors";
import { anonBudgetExceeded, authorize, authorOf, machineAuthor, refusals, sameJson, type Author, type Principal } from "../../src/permissions";
import { declaredCollection, validateRow, type CompiledCollection, type CompiledManifest } from "../../src/manifest";
import type { Change, EffectKind } from "../../src/rules/match";
import { MAX_DATA_DEPTH, nestsDeeperThan, type Challenge, type DeletedRowView, type PortableRow, type RowPage, type RowView } from "./contract";
import { afterCursorSql, compactParams, cursorValues, encodeCursor, filterSql, fragment, orderSql, resolveSort, takePage, whereSql } from "./query";
import { appendFeed, type HeldEntry } from "./feed";
import { readMeta, readUsage } from "./schema";
import { recordEffects } from "./outbox";
import { hides } from "./visibility";
import {
  authorFrom, byteLength, checkKey, findRow, mintKey, nonFiniteAt, recoverableUntil, restoreCutoff, rowContext, uniqueSlot, viewRow,
  RESTORE_WINDOW_DAYS, type StoredRow,
} from "./values";

export interface Limits {
  maxRows: number;
  maxStorageBytes: number;
}

/** Who writes and when: the principal, the bot challenge the Worker checked, and the write's timestamp. */
export interface WriteContext {
  principal: Principal;
  challenge: Challenge;
  now: string;
}

function fail(decision: { ok: false; error: RelayError }): never {
  throw decision.error;
}

export class Rows {
  constructor(
    private readonly sql: SqlStorage,
    private readonly manifest: CompiledManifest,
    private readonly limits: Limits,
    /** Effect kinds this caller asked to keep quiet (batch imports); recorded, not emitted. */
    private readonly suppressed: ReadonlySet<EffectKind> = new Set(),
  ) {}

  /** `row`: the written row as it was before the write (its creation time and creator, which a write never changes). */
  private effects(change: Change, held: HeldEntry, row: Pick<StoredRow, "created_at" | "creator_kind" | "creator_id">): void {
    recordEffects(this.sql, this.manifest, this.suppressed, change, held.entry, { createdAt: row.created_at, creator: authorFrom(row.creator_kind, row.creator_id) });
  }

  private collection(name: string): CompiledCollection {
    return declaredCollection(this.manifest, name);
  }

  private find(collection: string, key: string): StoredRow | null {
    return findRow(this.sql, collection, key);
  }

  private live(collection: string, key: string): StoredRow | null {
    const row = this.find(collection, key);
    return row && row.deleted_at === null ? row : null;
  }

  private hides(principal: Principal, row: StoredRow): boolean {
    return hides(this.manifest, principal, row);
  }

  // ---- reads ----

  get(principal: Principal, collection: string, key: string): RowView {
    const row = this.live(collection, key);
    const decision = authorize(this.manifest, principal, "get", { collection, row: row ? rowContext(row) : null });
    if (!decision.ok) fail(decision);
    return viewRow(row!);
  }

  list(principal: Principal, collection: string, input: { where?: unknown; sort?: unknown; since?: string; limit: number }): RowPage {
    const col = this.collection(collection);
    const decision = authorize(this.manifest, principal, "list", { collection });
    if (!decision.ok) fail(decision);
    const where = whereSql(col, input.where);
    const sort = resolveSort(col, input.sort, readMeta(this.sql, "app_id"));
    const after = input.since ? afterCursorSql(sort, input.since) : fragment`1`;
    const scope = filterSql(decision.filter);
    const query = compactParams(fragment`SELECT * FROM _svc_rows WHERE collection = ${collection} AND deleted_at IS NULL AND (${scope}) AND (${where}) AND (${after})
       ORDER BY ${orderSql(sort)} LIMIT ${input.limit + 1}`);
    const { page, more } = takePage(this.sql.exec<StoredRow>(query.sql, ...query.params), input.limit, (row) => row.bytes);
    const last = page[page.length - 1];
    return {
      rows: page.map(viewRow),
      // The last page ends the list (WIRE §2.3): a client paging `while (next_cursor)` stops.
      next_cursor: more && last ? encodeCursor(sort, cursorValues(sort, JSON.parse(last.data)), last.rid) : null,
      has_more: more,
    };
  }

  count(principal: Principal, collection: string): number {
    this.collection(collection);
    const decision = authorize(this.manifest, principal, "count", { collection });
    if (!decision.ok) fail(decision);
    const query = compactParams(fragment`SELECT count(*) AS n FROM _svc_rows WHERE collection = ${collection} AND deleted_at IS NULL AND (${filterSql(decision.filter)})`);
    return Number(this.sql.exec<{ n: number }>(query.sql, ...query.params).one().n);
  }

  deleted(principal: Principal, collection: string, input: { before?: string; limit: number }): { rows: DeletedRowView[]; next_before: string | null } {
    this.collection(collection);
    const decision = authorize(this.manifest, principal, "listDeleted", { collection });
    if (!decision.ok) fail(decision);
    // Only recoverable rows: those past the restore window wait for the sweep, unlisted.
    // `before` is a previous next_before (`<deleted_at>~<rid>`: rows deleted in the same
    // millisecond are told apart by rid) or a bare timestamp.
    const cursor = input.before ? /^(.*)~(\d{1,15})$/.exec(input.before) : null;
    const before = cursor
      ? fragment`AND (deleted_at < ${cursor[1]} OR (deleted_at = ${cursor[1]} AND rid < ${Number(cursor[2])}))`
      : input.before ? fragment`AND deleted_at < ${input.before}` : fragment``;
    const query = fragment`SELECT * FROM _svc_rows WHERE collection = ${collection} AND deleted_at IS NOT NULL AND purged = 0 AND deleted_at >= ${restoreCutoff(Date.now())} ${before}
       ORDER BY deleted_at DESC, rid DESC LIMIT ${input.limit + 1}`;
    const { page, more } = takePage(this.sql.exec<StoredRow>(query.sql, ...query.params), input.limit, (row) => row.bytes);
    const last = page[page.length - 1];
    return {
      rows: page.map((row) => ({
        key: row.key, data: JSON.parse(row.data), version: row.version,
        author: row.deleter_kind ? authorFrom(row.deleter_kind, row.deleter_id!) : null,
        creator: authorFrom(row.creator_kind, row.creator_id), created_at: row.created_at, deleted_at: row.deleted_at!,
        recoverable_until: recoverableUntil(row.deleted_at!), purged: false,
      })),
      next_before: more ? `${last.deleted_at}~${last.rid}` : null,
    };
  }

  // ---- writes ----

  /**
   * POST: create at a minted or given key; a given key that exists is returned as `deduped`; `on` upserts by a unique field.
   *
   * Write paths never confirm a key the read path would hide (spec B rule 9). Whether the
   * caller may create at all needs no row, so it is decided first: a caller who may not
   * create gets the same refusal whatever is stored at the key (live, deleted, purged or
   * nothing). A caller who may create, colliding with a row it cannot read (live or
   * deleted), is told row_not_found, like a get. Only a readable collision is deduped
   * (live) or a conflict (deleted). An `on` upsert takes its update half only for a row
   * the caller can read; a holder it cannot read is answered as a hidden collision.
   */
  create(ctx: WriteContext, collection: string, input: { data: unknown; key?: string; on?: string }, feed: HeldEntry[]): { row: RowView; deduped?: true; created: boolean } {
    const col = this.collection(collection);
    if (input.key !== undefined) checkKey(input.key);
    let hiddenHolder = false;
    if (input.on !== undefined) {
      if (input.key !== undefined) throw new RelayError("invalid_request", "Send either key or on, not both.", { field: "on" });
      if (!col.unique.includes(input.on)) {
        throw new RelayError("invalid_request", `"${input.on}" is not a unique field of "${collection}"; on needs one of: ${col.unique.join(", ") || "(none declared)"}.`, { field: "on" });
      }
      const held = this.holderOf(col, input.on, input.data);
      if (held) {
        if (!this.hides(ctx.principal, held)) return { row: this.update(ctx, collection, held.key, { data: input.data }, feed, { upsert: true }), created: false };
        hiddenHolder = true;
      }
    }
    const decision = authorize(this.manifest, ctx.principal, "create", { collection, key: input.key ?? null, data: input.data });
    if (!decision.ok) fail(decision);
    this.checkChallenge(decision.checks.challenge, ctx);
    if (hiddenHolder) fail(refusals.rowNotFound());
    // keyClaim caller fills the key in when it is omitted: the same rules as a given key apply.
    const key = decision.key ?? mintKey();
    // A minted key is new; a given one may be held by a purged row, whose slot the insert takes.
    let purged: StoredRow | null = null;
    if (decision.key !== null) {
      const existing = this.find(collection, key);
      if (existing?.purged) purged = existing;
      else if (existing) {
        // The collision answers as a get of the row would (row_not_found when it is hidden), deleted or not.
        const seen = authorize(this.manifest, ctx.principal, "get", { collection, row: rowContext(existing) });
        if (!seen.ok) fail(seen);
        if (existing.deleted_at === null) return { row: viewRow(existing), deduped: true, created: false };
        throw new RelayError("conflict", `A deleted row holds the key "${key}"; restore or purge it first.`, { key });
      }
    }
    const row = this.insert(col, key, purged, input.data, authorOf(ctx.principal), ctx.now, feed, () => this.spendBudget(collection, decision.checks.anonBudget, ctx.now));
    return { row, created: true };
  }

  /**
   * A new row at `key`, where no row is or only the `purged` one (whose slot is reused):
   * serverSet, schema, size, quota and unique checked, `beforeWrite` run last (the
   * anonymous budget), then the row, its feed entry and its effects.
   */
  private insert(col: CompiledCollection, key: string, purged: StoredRow | null, input: unknown, stamp: Author, now: string, feed: HeldEntry[], beforeWrite: () => void = () => {}): RowView {
    const collection = col.name;
    const data = this.applyServerSet(col, input, null);
    const text = this.checkData(col, data);
    const bytes = byteLength(text);
    this.checkQuota(bytes, 1);
    this.claimUnique(col, key, data);
    beforeWrite();
    if (purged) this.sql.exec("DELETE FROM _svc_rows WHERE rid = ?", purged.rid);
    const { rid } = this.sql.exec<{ rid: number }>(
      `INSERT INTO _svc_rows (collection, key, data, version, bytes, creator_kind, creator_id, editor_kind, editor_id, created_at, updated_at)
       VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?) RETURNING rid`,
      collection, key, text, bytes, stamp.kind, stamp.id, stamp.kind, stamp.id, now, now,
    ).one();
    // The row as just written (only `rid` is the table's): no read back.
    const row: StoredRow = {
      rid, collection, key, data: text, version: 1, bytes, creator_kind: stamp.kind, creator_id: stamp.id, editor_kind: stamp.kind, editor_id: stamp.id,
      created_at: now, updated_at: now, deleted_at: null, deleter_kind: null, deleter_id: null, purged: 0,
    };
    const created = appendFeed(this.sql, { op: "create", collection, key, version: 1, data: text, author: stamp, ts: now });
    feed.push(created);
    this.effects({ op: "create", collection, before: null, after: data, authorKind: stamp.kind }, created, row);
    return viewRow(row);
  }

  /** The live row holding `data`'s value of the unique `field`, if any. */
  private holderOf(col: CompiledCollection, field: string, data: unknown): StoredRow | null {
    const slot = uniqueSlot((data as Record<string, unknown> | null)?.[field]);
    const holder = slot ? this.sql.exec<{ key: string }>("SELECT key FROM _svc_unique WHERE collection = ? AND field = ? AND value = ?", col.name, field, slot).toArray()[0] : undefined;
    return holder ? this.live(col.name, holder.key) : null;
  }

  /**
   * PATCH: `data` replaces the row's data; `if_match` must equal the version the caller read.
   * `upsert`: the update half of a create with `on`, which needs the bot challenge like a create.
   */
  update(ctx: WriteContext, collection: string, key: string, input: { data: unknown; if_match?: number }, feed: HeldEntry[], opts: { upsert?: boolean } = {}): RowView {
    const col = this.collection(collection);
    const row = this.live(collection, key);
    const decision = authorize(this.manifest, ctx.principal, "update", { collection, row: row ? rowContext(row) : null, data: input.data });
    if (!decision.ok) fail(decision);
    if (opts.upsert) this.checkChallenge(decision.checks.challenge, ctx);
    const current = row!;
    this.checkIfMatch(current, input.if_match);
    return this.rewrite(col, current, input.data, authorOf(ctx.principal), ctx.now, feed, () => this.spendBudget(collection, decision.checks.anonBudget, ctx.now));
  }

  /** Replaces a live row's data (immutable fields carried, serverSet kept): checks, `beforeWrite`, the row, its feed entry and its effects. */
  private rewrite(col: CompiledCollection, current: StoredRow, input: unknown, stamp: Author, now: string, feed: HeldEntry[], beforeWrite: () => void = () => {}): RowView {
    const { name: collection } = col;
    const { key } = current;
    const previous = JSON.parse(current.data);
    const data = this.carryImmutable(col, this.applyServerSet(col, input, previous), previous);
    const text = this.checkData(col, data);
    this.checkQuota(byteLength(text) - current.bytes, 0);
    this.claimUnique(col, key, data);
    beforeWrite();
    const version = current.version + 1;
    this.sql.exec(
      "UPDATE _svc_rows SET data = ?, bytes = ?, version = ?, editor_kind = ?, editor_id = ?, updated_at = ? WHERE rid = ?",
      text, byteLength(text), version, stamp.kind, stamp.id, now, current.rid,
    );
    const updated = appendFeed(this.sql, {
      op: "update", collection, key, version, data: text, author: stamp, ts: now,
      prev: { data: current.data, editor: authorFrom(current.editor_kind, current.editor_id) },
    });
    feed.push(updated);
    this.effects({ op: "update", collection, before: previous, after: data, authorKind: stamp.kind }, updated, current);
    return viewRow(this.live(collection, key)!);
  }

  /**
   * An inbound hook's write (WIRE §6.3), stamped `hook` and checked like any write (schema,
   * size, serverSet, unique, quota) but against no permission list: the hook's URL secret
   * (and signature) is its authority. With `upsertOn`, the live row holding the value is
   * updated (`ifMatch`, when given, must equal its version); otherwise a row is created at
   * `key`, the delivery's id, so a delivery taken over after a crash finds the row it
   * already wrote instead of writing a second one.
   */
  hookWrite(stamp: Author, collection: string, input: { key: string; data: unknown; upsertOn: string | null; ifMatch?: number }, now: string, feed: HeldEntry[]): { row: RowView; created: boolean } {
    const col = this.collection(collection);
    checkKey(input.key);
    const held = input.upsertOn ? this.holderOf(col, input.upsertOn, input.data) : null;
    if (held) {
      // What no writer may do, a hook may not either: update an append-only row or change an immutable field.
      if (col.appendOnly) fail(refusals.appendOnly(collection));
      const previous = JSON.parse(held.data) as Record<string, unknown>;
      const next = input.data as Record<string, unknown>;
      for (const field of col.immutable) {
        if (Object.hasOwn(next, field) && !sameJson(previous?.[field], next[field])) fail(refusals.immutable(collection, field));
      }
      this.checkIfMatch(held, input.ifMatch);
      return { row: this.rewrite(col, held, input.data, stamp, now, feed), created: false };
    }
    const written = this.find(collection, input.key);
    if (written && !written.purged) return { row: viewRow(written), created: false };
    return { row: this.insert(col, input.key, written, input.data, stamp, now, feed), created: true };
  }

  /** DELETE: soft delete (restorable for 30 days); frees the row's unique values. */
  remove(ctx: WriteContext, collection: string, key: string, input: { if_match?: number }, feed: HeldEntry[]): void {
    this.collection(collection);
    const row = this.live(collection, key);
    const decision = authorize(this.manifest, ctx.principal, "delete", { collection, row: row ? rowContext(row) : null });
    if (!decision.ok) fail(decision);
    this.checkIfMatch(row!, input.if_match);
    const stamp = authorOf(ctx.principal);
    this.sql.exec("UPDATE _svc_rows SET deleted_at = ?, deleter_kind = ?, deleter_id = ? WHERE rid = ?", ctx.now, stamp.kind, stamp.id, row!.rid);
    this.sql.exec("DELETE FROM _svc_unique WHERE collection = ? AND key = ?", collection, key);
    // The row as readers last saw it: a reader whose read is scoped to the last editor must still hear of the delete.
    feed.push(appendFeed(this.sql, {
      op: "delete", collection, key, version: row!.version, data: row!.data, author: stamp, ts: ctx.now,
      prev: { data: row!.data, editor: authorFrom(row!.editor_kind, row!.editor_id) },
    }));
  }

  /** Purge: owner or agent; live or soft-deleted; data scrubbed for good (feed included); an audited delete entry. */
  purge(ctx: WriteContext, collection: string, key: string, feed: HeldEntry[]): void {
    this.collection(collection);
    const found = this.find(collection, key);
    const row = found && !found.purged ? found : null;
    const decision = authorize(this.manifest, ctx.principal, "purge", { collection, row: row ? rowContext(row) : null });
    if (!decision.ok) fail(decision);
    const stamp = authorOf(ctx.principal);
    this.sql.exec(
      "UPDATE _svc_rows SET data = 'null', bytes = 0, purged = 1, deleted_at = COALESCE(deleted_at, ?), deleter_kind = ?, deleter_id = ? WHERE rid = ?",
      ctx.now, stamp.kind, stamp.id, row!.rid,
    );
    this.sql.exec("DELETE FROM _svc_unique WHERE collection = ? AND key = ?", collection, key);
    // The row's earlier feed entries carried its data too (and updates its previous data):
    // they keep their place in the feed with data null (JSON null, so only the audited
    // entry below reads as purged) and no previous state.
    this.sql.exec(
      "UPDATE _svc_feed SET data = 'null', prev = NULL WHERE collection = ? AND key = ? AND (data IS NOT NULL OR prev IS NOT NULL)", collection, key,
    );
    // Who could read the row before is judged on its last state, for the sockets this commit
    // reaches (appendFeed keeps that state in memory only).
    const prev = { data: row!.data, editor: authorFrom(row!.editor_kind, row!.editor_id) };
    feed.push(appendFeed(this.sql, { op: "delete", collection, key, version: row!.version, data: null, author: stamp, ts: ctx.now, purged: true, prev }));
  }

  /** Restore a soft-deleted row within 30 days: version bumped, original data and creator. */
  restore(ctx: WriteContext, collection: string, key: string, feed: HeldEntry[]): RowView {
    const col = this.collection(collection);
    const found = this.find(collection, key);
    if (found && found.purged) {
      const d = authorize(this.manifest, ctx.principal, "restore", { collection, row: null });
      if (!d.ok && d.code !== "row_not_found") fail(d);
      throw new RelayError("restore_expired", "This row was purged; it cannot be restored.", { key });
    }
    const row = found && found.deleted_at !== null ? found : null;
    const decision = authorize(this.manifest, ctx.principal, "restore", { collection, row: row ? rowContext(row) : null });
    if (!decision.ok) fail(decision);
    if (Date.parse(ctx.now) > Date.parse(recoverableUntil(row!.deleted_at!))) {
      throw new RelayError("restore_expired", `This row was deleted more than ${RESTORE_WINDOW_DAYS} days ago.`, { key, deleted_at: row!.deleted_at });
    }
    const data = JSON.parse(row!.data);
    this.checkQuota(0, 1);
    try {
      this.claimUnique(col, key, data);
    } catch (err) {
      if (err instanceof RelayError && err.code === "unique_conflict") {
        throw new RelayError("restore_conflict", `A live row now holds this row's unique value of "${String(err.details?.field)}".`, err.details);
      }
      throw err;
    }
    const stamp = authorOf(ctx.principal);
    const version = row!.version + 1;
    this.sql.exec(
      "UPDATE _svc_rows SET deleted_at = NULL, deleter_kind = NULL, deleter_id = NULL, version = ?, editor_kind = ?, editor_id = ?, updated_at = ? WHERE rid = ?",
      version, stamp.kind, stamp.id, ctx.now, row!.rid,
    );
    feed.push(appendFeed(this.sql, { op: "create", collection, key, version, data: row!.data, author: stamp, ts: ctx.now }));
    return viewRow(this.live(collection, key)!);
  }

  /**
   * A starter row written with the deploy that creates the app (`input_data`): checked
   * like any write (schema, size, unique, quota) but not against the permission lists,
   * stamped as the system.
   */
  seed(collection: string, input: { key?: string; data: unknown }, now: string, feed: HeldEntry[]): void {
    const col = this.collection(collection);
    if (input.key !== undefined) checkKey(input.key);
    const stamp = machineAuthor("system", "seed");
    const data = this.applyServerSet(col, input.data, null);
    this.insertAsIs(col, { key: input.key ?? mintKey(), data, version: 1, creator: stamp, editor: stamp, createdAt: now, updatedAt: now }, now, feed, "Two starter rows");
  }

  /**
   * A row carried over by an app import: its key, data, version and stamps as they were
   * exported. No serverSet step (the data already holds those values) and no effects;
   * schema, size, quota and unique are checked like any write.
   */
  place(row: PortableRow, now: string, feed: HeldEntry[]): void {
    const col = this.collection(row.collection);
    checkKey(row.key);
    if (!Number.isSafeInteger(row.version) || row.version < 1) {
      throw new RelayError("invalid_request", `Row "${row.key}" of "${row.collection}" has version ${String(row.version)}; versions are whole numbers from 1.`, { key: row.key });
    }
    this.insertAsIs(col, { key: row.key, data: row.data, version: row.version, creator: row.creator, editor: row.editor, createdAt: row.created_at, updatedAt: row.updated_at }, now, feed, "Two imported rows");
  }

  /** Inserts a row with the version and stamps given (starter and imported rows), and its create entry in the feed. */
  private insertAsIs(
    col: CompiledCollection,
    row: { key: string; data: unknown; version: number; creator: Author; editor: Author; createdAt: string; updatedAt: string },
    now: string, feed: HeldEntry[], clash: string,
  ): void {
    const collection = col.name;
    if (this.find(collection, row.key)) throw new RelayError("conflict", `${clash} of "${collection}" share the key "${row.key}".`, { key: row.key });
    const text = this.checkData(col, row.data);
    this.checkQuota(byteLength(text), 1);
    this.claimUnique(col, row.key, row.data);
    this.sql.exec(
      `INSERT INTO _svc_rows (collection, key, data, version, bytes, creator_kind, creator_id, editor_kind, editor_id, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      collection, row.key, text, row.version, byteLength(text), row.creator.kind, row.creator.id, row.editor.kind, row.editor.id, row.createdAt, row.updatedAt,
    );
    feed.push(appendFeed(this.sql, { op: "create", collection, key: row.key, version: row.version, data: text, author: row.editor, ts: now }));
  }

  // ---- checks ----

  private checkIfMatch(row: StoredRow, ifMatch: number | undefined): void {
    if (ifMatch !== undefined && ifMatch !== row.version) {
      throw new RelayError("conflict", `The row is at version ${row.version}, not ${ifMatch}; rebase on details.current and retry.`, { current: viewRow(row) });
    }
  }

  private checkChallenge(needed: boolean, ctx: WriteContext): void {
    if (!needed) return;
    if (ctx.challenge === "absent") throw new RelayError("turnstile_required", "This collection needs a bot-challenge token with each anonymous write.");
    if (ctx.challenge === "failed") throw new RelayError("turnstile_verification_failed", "The bot-challenge token was rejected.");
  }

  private checkData(col: CompiledCollection, data: unknown): string {
    if (data === undefined) throw new RelayError("invalid_request", "A row needs `data`.", { field: "data" });
    if (nestsDeeperThan(data, MAX_DATA_DEPTH)) {
      throw new RelayError("invalid_request", `Row data may nest at most ${MAX_DATA_DEPTH} arrays or objects deep.`, { field: "data", limit: MAX_DATA_DEPTH });
    }
    const at = nonFiniteAt(data);
    if (at) {
      // Named like the route's field errors (`data.a.0`) and, as a JSON pointer, like schema errors.
      throw new RelayError("invalid_request", "Row data may hold only finite numbers: JSON has no NaN or Infinity (a number like 1e400 is out of range).", {
        field: ["data", ...at].join("."), path: at.map((p) => `/${p.replace(/~/g, "~0").replace(/\//g, "~1")}`).join(""),
      });
    }
    const result = validateRow(this.manifest, col.name, data);
    if (!result.ok) {
      throw new RelayError("row_schema_violation", `The row does not match the schema of "${col.name}": ${result.errors[0]?.path || "/"} ${result.errors[0]?.message ?? ""}`.trim(),
        { collection: col.name, errors: result.errors });
    }
    const text = JSON.stringify(data);
    const bytes = byteLength(text);
    if (bytes > col.maxRowBytes) {
      throw new RelayError("row_size_exceeded", `The row's data is ${bytes} bytes; "${col.name}" takes at most ${col.maxRowBytes}.`, { limit: col.maxRowBytes, bytes });
    }
    return text;
  }

  private checkQuota(addedBytes: number, addedRows: number): void {
    const usage = readUsage(this.sql);
    if (addedRows > 0) {
      const rows = usage.liveRows;
      if (rows + addedRows > this.limits.maxRows) {
        throw new RelayError("app_quota_exceeded", `This app holds ${rows} rows, the most it may hold.`, { limit: this.limits.maxRows, resource: "rows" });
      }
    }
    if (addedBytes > 0) {
      const used = usage.storedBytes;
      if (used + addedBytes > this.limits.maxStorageBytes) {
        throw new RelayError("app_quota_exceeded", `This app's rows use ${used} bytes of ${this.limits.maxStorageBytes}.`, { limit: this.limits.maxStorageBytes, resource: "storage" });
      }
    }
  }

  /** Takes the row's unique slots (releasing its old ones); a slot held by another live row is a conflict. */
  private claimUnique(col: CompiledCollection, key: string, data: unknown): void {
    // No unique field, no slot to release: the manifest's load dropped any an older version kept (unique.ts).
    if (col.unique.length === 0) return;
    this.sql.exec("DELETE FROM _svc_unique WHERE collection = ? AND key = ?", col.name, key);
    for (const field of col.unique) {
      const slot = uniqueSlot((data as Record<string, unknown> | null)?.[field]);
      if (!slot) continue;
      const holder = this.sql.exec<{ key: string }>("SELECT key FROM _svc_unique WHERE collection = ? AND field = ? AND value = ?", col.name, field, slot).toArray()[0];
      if (holder) {
        throw new RelayError("unique_conflict", `Another row already has this "${field}"; upsert with on: "${field}" to update it instead.`, { field, collection: col.name });
      }
      this.sql.exec("INSERT INTO _svc_unique (collection, field, value, key) VALUES (?, ?, ?, ?)", col.name, field, slot, key);
    }
  }

  private spendBudget(collection: string, budget: { perIpPerDay: number; perAppPerDay: number; ip: string | null } | null, now: string): void {
    if (!budget) return;
    const day = now.slice(0, 10);
    const axes: Array<["perIpPerDay" | "perAppPerDay", number, string]> = [
      ["perAppPerDay", budget.perAppPerDay, "app"],
      ["perIpPerDay", budget.perIpPerDay, budget.ip ?? "unknown"],
    ];
    for (const [scope, cap, subject] of axes) {
      if (cap === 0) continue;
      const used = this.sql.exec<{ used: number }>(
        "SELECT used FROM _svc_anon_budget WHERE collection = ? AND scope = ? AND subject = ? AND day = ?", collection, scope, subject, day,
      ).toArray()[0]?.used ?? 0;
      if (used >= cap) {
        throw anonBudgetExceeded(collection, scope, cap);
      }
    }
    for (const [scope, cap, subject] of axes) {
      if (cap === 0) continue;
      this.sql.exec(
        `INSERT INTO _svc_anon_budget (collection, scope, subject, day, used) VALUES (?, ?, ?, ?, 1)
         ON CONFLICT (collection, scope, subject, day) DO UPDATE SET used = used + 1`, collection, scope, subject, day,
      );
    }
  }

  /** Immutable fields a PATCH leaves out keep their stored value (the engine refused any change). */
  private carryImmutable(col: CompiledCollection, data: unknown, previous: unknown): unknown {
    const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
    if (col.immutable.length === 0 || !isObject(data) || !isObject(previous)) return data;
    const out: Record<string, unknown> = { ...data };
    for (const field of col.immutable) {
      if (!Object.hasOwn(out, field) && Object.hasOwn(previous, field)) out[field] = previous[field];
    }
    return out;
  }

  /** Fills serverSet fields on create; on update a supplied value must echo the stored one. */
  private applyServerSet(col: CompiledCollection, data: unknown, previous: Record<string, unknown> | null): unknown {
    const fields = Object.entries(col.serverSet);
    if (fields.length === 0 || typeof data !== "object" || data === null || Array.isArray(data)) return data;
    const out: Record<string, unknown> = { ...(data as Record<string, unknown>) };
    for (const [field, rule] of fields) {
      if (previous) {
        if (field in out && JSON.stringify(out[field]) !== JSON.stringify(previous[field])) {
          throw new RelayError("server_set_field_supplied", `"${field}" is set by the relay; leave it out or send its current value.`, { field });
        }
        if (previous[field] !== undefined) out[field] = previous[field];
        continue;
      }
      if (field in out) throw new RelayError("server_set_field_supplied", `"${field}" is set by the relay; leave it out.`, { field });
      if (rule.kind === "lookup") {
        const sourceKey = out[rule.keyField];
        const source = typeof sourceKey === "string" ? this.live(rule.from, sourceKey) : null;
        if (!source) {
          throw new RelayError("server_set_source_missing", `No row "${String(sourceKey)}" in "${rule.from}" to take "${rule.take}" from.`, { field, from: rule.from });
        }
        out[field] = (JSON.parse(source.data) as Record<string, unknown>)?.[rule.take];
      } else {
        const values = rule.operands.map((o) => out[o]);
        if (!values.every((v) => typeof v === "number")) {
          throw new RelayError("server_set_source_missing", `"${field}" needs numbers in ${rule.operands.join(", ")}.`, { field });
        }
        out[field] = (values as number[]).reduce((a, b) => (rule.kind === "sum" ? a + b : a * b), rule.kind === "sum" ? 0 : 1);
      }
    }
    return out;
  }
}
