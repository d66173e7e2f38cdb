/**
 * The writes that put data in a row: create (at a minted or given key, or an upsert by a
 * unique field), update, and an inbound hook's write. Each checks permission (the pure
 * engine in src/permissions), the bot challenge, serverSet, schema, size, unique, quotas
 * and the anonymous budget, then writes the row, its unique slots, its feed entry and its
 * effects in the outbox together, inside the transaction the caller opened. The create
 * path lives here, apart from the reads and the removals, because it is the hot one.
 */
import { RelayError } from "../../src/errors";
import { authorize, authorOf, refusals, sameJson, type Author } from "../../src/permissions";
import { declaredCollection, type CompiledCollection } from "../../src/manifest";
import type { Change } from "../../src/rules/match";
import type { RowView } from "./contract";
import { appendFeed, type HeldEntry } from "./feed";
import { recordEffects } from "./outbox";
import { hides } from "./visibility";
import { fail, liveRow, type RowScope, type WriteContext } from "./rows-scope";
import { checkChallenge, checkData, checkIfMatch, checkQuota, spendBudget } from "./rows-checks";
import { applyServerSet, carryImmutable } from "./rows-field-rules";
import { claimUnique, holderOf } from "./rows-unique";
import { authorFrom, byteLength, checkKey, findRow, mintKey, rowContext, viewRow, type StoredRow } from "./values";

/** `row`: the written row as it was before the write (its creation time and creator, which a write never changes). */
function recordRowEffects(scope: RowScope, change: Change, held: HeldEntry, row: Pick<StoredRow, "created_at" | "creator_kind" | "creator_id">): void {
  recordEffects(scope.sql, scope.manifest, scope.suppressed, change, held.entry, { createdAt: row.created_at, creator: authorFrom(row.creator_kind, row.creator_id) });
}

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
export function create(scope: RowScope, ctx: WriteContext, collection: string, input: { data: unknown; key?: string; on?: string }, feed: HeldEntry[]): { row: RowView; deduped?: true; created: boolean } {
  const { sql, manifest } = scope;
  const col = declaredCollection(manifest, collection);
  if (input.key !== undefined) checkKey(input.key);
  let hiddenHolder = false;
  if (input.on !== undefined) {
    if (input.key !== undefined) throw new RelayError("invalid_request", "Send either key or on, not both.", { field: "on" });
    if (!col.unique.includes(input.on)) {
      throw new RelayError("invalid_request", `"${input.on}" is not a unique field of "${collection}"; on needs one of: ${col.unique.join(", ") || "(none declared)"}.`, { field: "on" });
    }
    const held = holderOf(sql, col, input.on, input.data);
    if (held) {
      if (!hides(manifest, ctx.principal, held)) return { row: update(scope, ctx, collection, held.key, { data: input.data }, feed, { upsert: true }), created: false };
      hiddenHolder = true;
    }
  }
  const decision = authorize(manifest, ctx.principal, "create", { collection, key: input.key ?? null, data: input.data });
  if (!decision.ok) fail(decision);
  checkChallenge(decision.checks.challenge, ctx);
  if (hiddenHolder) fail(refusals.rowNotFound());
  // keyClaim caller fills the key in when it is omitted: the same rules as a given key apply.
  const key = decision.key ?? mintKey();
  // A minted key is new; a given one may be held by a purged row, whose slot the insert takes.
  let purged: StoredRow | null = null;
  if (decision.key !== null) {
    const existing = findRow(sql, collection, key);
    if (existing?.purged) purged = existing;
    else if (existing) {
      // The collision answers as a get of the row would (row_not_found when it is hidden), deleted or not.
      const seen = authorize(manifest, ctx.principal, "get", { collection, row: rowContext(existing) });
      if (!seen.ok) fail(seen);
      if (existing.deleted_at === null) return { row: viewRow(existing), deduped: true, created: false };
      throw new RelayError("conflict", `A deleted row holds the key "${key}"; restore or purge it first.`, { key });
    }
  }
  const row = insert(scope, col, key, purged, input.data, authorOf(ctx.principal), ctx.now, feed, () => spendBudget(sql, collection, decision.checks.anonBudget, ctx.now));
  return { row, created: true };
}

/**
 * A new row at `key`, where no row is or only the `purged` one (whose slot is reused):
 * serverSet, schema, size, quota and unique checked, `beforeWrite` run last (the
 * anonymous budget), then the row, its feed entry and its effects.
 */
function insert(scope: RowScope, col: CompiledCollection, key: string, purged: StoredRow | null, input: unknown, stamp: Author, now: string, feed: HeldEntry[], beforeWrite: () => void = () => {}): RowView {
  const { sql } = scope;
  const collection = col.name;
  const data = applyServerSet(sql, col, input, null);
  const text = checkData(scope.manifest, col, data);
  const bytes = byteLength(text);
  checkQuota(scope, bytes, 1);
  claimUnique(sql, col, key, data);
  beforeWrite();
  if (purged) sql.exec("DELETE FROM _svc_rows WHERE rid = ?", purged.rid);
  const { rid } = sql.exec<{ rid: number }>(
    `INSERT INTO _svc_rows (collection, key, data, version, bytes, creator_kind, creator_id, editor_kind, editor_id, created_at, updated_at)
     VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?) RETURNING rid`,
    collection, key, text, bytes, stamp.kind, stamp.id, stamp.kind, stamp.id, now, now,
  ).one();
  // The row as just written (only `rid` is the table's): no read back.
  const row: StoredRow = {
    rid, collection, key, data: text, version: 1, bytes, creator_kind: stamp.kind, creator_id: stamp.id, editor_kind: stamp.kind, editor_id: stamp.id,
    created_at: now, updated_at: now, deleted_at: null, deleter_kind: null, deleter_id: null, purged: 0,
  };
  const created = appendFeed(sql, { op: "create", collection, key, version: 1, data: text, author: stamp, ts: now });
  feed.push(created);
  recordRowEffects(scope, { op: "create", collection, before: null, after: data, authorKind: stamp.kind }, created, row);
  return viewRow(row);
}

/**
 * PATCH: `data` replaces the row's data; `if_match` must equal the version the caller read.
 * `upsert`: the update half of a create with `on`, which needs the bot challenge like a create.
 */
export function update(scope: RowScope, ctx: WriteContext, collection: string, key: string, input: { data: unknown; if_match?: number }, feed: HeldEntry[], opts: { upsert?: boolean } = {}): RowView {
  const col = declaredCollection(scope.manifest, collection);
  const row = liveRow(scope.sql, collection, key);
  const decision = authorize(scope.manifest, ctx.principal, "update", { collection, row: row ? rowContext(row) : null, data: input.data });
  if (!decision.ok) fail(decision);
  if (opts.upsert) checkChallenge(decision.checks.challenge, ctx);
  const current = row!;
  checkIfMatch(current, input.if_match);
  return rewrite(scope, col, current, input.data, authorOf(ctx.principal), ctx.now, feed, () => spendBudget(scope.sql, collection, decision.checks.anonBudget, ctx.now));
}

/** Replaces a live row's data (immutable fields carried, serverSet kept): checks, `beforeWrite`, the row, its feed entry and its effects. */
function rewrite(scope: RowScope, col: CompiledCollection, current: StoredRow, input: unknown, stamp: Author, now: string, feed: HeldEntry[], beforeWrite: () => void = () => {}): RowView {
  const { sql } = scope;
  const { name: collection } = col;
  const { key } = current;
  const previous = JSON.parse(current.data);
  const data = carryImmutable(col, applyServerSet(sql, col, input, previous), previous);
  const text = checkData(scope.manifest, col, data);
  checkQuota(scope, byteLength(text) - current.bytes, 0);
  claimUnique(sql, col, key, data);
  beforeWrite();
  const version = current.version + 1;
  sql.exec(
    "UPDATE _svc_rows SET data = ?, bytes = ?, version = ?, editor_kind = ?, editor_id = ?, updated_at = ? WHERE rid = ?",
    text, byteLength(text), version, stamp.kind, stamp.id, now, current.rid,
  );
  const updated = appendFeed(sql, {
    op: "update", collection, key, version, data: text, author: stamp, ts: now,
    prev: { data: current.data, editor: authorFrom(current.editor_kind, current.editor_id) },
  });
  feed.push(updated);
  recordRowEffects(scope, { op: "update", collection, before: previous, after: data, authorKind: stamp.kind }, updated, current);
  return viewRow(liveRow(sql, collection, key)!);
}

/**
 * An inbound hook's write (WIRE §6.3), stamped `hook` and checked like any write (schema,
 * size, serverSet, unique, quota) but against no permission list: the hook's URL secret
 * (and signature) is its authority. With `upsertOn`, the live row holding the value is
 * updated (`ifMatch`, when given, must equal its version); otherwise a row is created at
 * `key`, the delivery's id, so a delivery taken over after a crash finds the row it
 * already wrote instead of writing a second one. The same holds for an upsert: a held
 * row at the delivery's own id is its own write, found and left as it is.
 */
export function hookWrite(scope: RowScope, stamp: Author, collection: string, input: { key: string; data: unknown; upsertOn: string | null; ifMatch?: number }, now: string, feed: HeldEntry[]): { row: RowView; created: boolean } {
  const col = declaredCollection(scope.manifest, collection);
  checkKey(input.key);
  const held = input.upsertOn ? holderOf(scope.sql, col, input.upsertOn, input.data) : null;
  if (held?.key === input.key) return { row: viewRow(held), created: false };
  if (held) {
    // What no writer may do, a hook may not either: update an append-only row or change an immutable field.
    if (col.appendOnly) fail(refusals.appendOnly(collection));
    const previous = JSON.parse(held.data) as Record<string, unknown>;
    const next = input.data as Record<string, unknown>;
    for (const field of col.immutable) {
      if (Object.hasOwn(next, field) && !sameJson(previous?.[field], next[field])) fail(refusals.immutable(collection, field));
    }
    checkIfMatch(held, input.ifMatch);
    return { row: rewrite(scope, col, held, input.data, stamp, now, feed), created: false };
  }
  const written = findRow(scope.sql, collection, input.key);
  if (written && !written.purged) return { row: viewRow(written), created: false };
  return { row: insert(scope, col, input.key, written, input.data, stamp, now, feed), created: true };
}
