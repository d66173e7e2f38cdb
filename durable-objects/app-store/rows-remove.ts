/**
 * Taking a row away and bringing it back: soft delete (restorable for 30 days, unique
 * values freed), purge (data scrubbed for good, feed included, with an audited delete
 * entry) and restore (version bumped, original data and creator). Apart from
 * rows-write.ts because these verbs move a row between live, deleted and purged rather
 * than change its data.
 */
import { RelayError } from "../../src/errors";
import { authorize, authorOf } from "../../src/permissions";
import { declaredCollection } from "../../src/manifest";
import type { RowView } from "./contract";
import { appendFeed, type HeldEntry } from "./feed";
import { fail, liveRow, type RowScope, type WriteContext } from "./rows-scope";
import { checkIfMatch, checkQuota } from "./rows-checks";
import { claimUnique } from "./rows-unique";
import { authorFrom, findRow, recoverableUntil, rowContext, viewRow, RESTORE_WINDOW_DAYS } from "./values";

/** DELETE: soft delete (restorable for 30 days); frees the row's unique values. */
export function remove(scope: RowScope, ctx: WriteContext, collection: string, key: string, input: { if_match?: number }, feed: HeldEntry[]): void {
  const { sql } = scope;
  declaredCollection(scope.manifest, collection);
  const row = liveRow(sql, collection, key);
  const decision = authorize(scope.manifest, ctx.principal, "delete", { collection, row: row ? rowContext(row) : null });
  if (!decision.ok) fail(decision);
  checkIfMatch(row!, input.if_match);
  const stamp = authorOf(ctx.principal);
  sql.exec("UPDATE _svc_rows SET deleted_at = ?, deleter_kind = ?, deleter_id = ? WHERE rid = ?", ctx.now, stamp.kind, stamp.id, row!.rid);
  sql.exec("DELETE FROM _svc_unique WHERE collection = ? AND key = ?", collection, key);
  // The row as readers last saw it: a reader whose read is scoped to the last editor must still hear of the delete.
  feed.push(appendFeed(sql, {
    op: "delete", collection, key, version: row!.version, data: row!.data, author: stamp, ts: ctx.now,
    prev: { data: row!.data, editor: authorFrom(row!.editor_kind, row!.editor_id) },
  }));
}

/** Purge: owner or agent; live or soft-deleted; data scrubbed for good (feed included); an audited delete entry. */
export function purge(scope: RowScope, ctx: WriteContext, collection: string, key: string, feed: HeldEntry[]): void {
  const { sql } = scope;
  declaredCollection(scope.manifest, collection);
  const found = findRow(sql, collection, key);
  const row = found && !found.purged ? found : null;
  const decision = authorize(scope.manifest, ctx.principal, "purge", { collection, row: row ? rowContext(row) : null });
  if (!decision.ok) fail(decision);
  const stamp = authorOf(ctx.principal);
  sql.exec(
    "UPDATE _svc_rows SET data = 'null', bytes = 0, purged = 1, deleted_at = COALESCE(deleted_at, ?), deleter_kind = ?, deleter_id = ? WHERE rid = ?",
    ctx.now, stamp.kind, stamp.id, row!.rid,
  );
  sql.exec("DELETE FROM _svc_unique WHERE collection = ? AND key = ?", collection, key);
  // The row's earlier feed entries carried its data too (and updates its previous data):
  // they keep their place in the feed with data null (JSON null, so only the audited
  // entry below reads as purged) and no previous state.
  sql.exec(
    "UPDATE _svc_feed SET data = 'null', prev = NULL WHERE collection = ? AND key = ? AND (data IS NOT NULL OR prev IS NOT NULL)", collection, key,
  );
  // Who could read the row before is judged on its last state, for the sockets this commit
  // reaches (appendFeed keeps that state in memory only).
  const prev = { data: row!.data, editor: authorFrom(row!.editor_kind, row!.editor_id) };
  feed.push(appendFeed(sql, { op: "delete", collection, key, version: row!.version, data: null, author: stamp, ts: ctx.now, purged: true, prev }));
}

/** Restore a soft-deleted row within 30 days: version bumped, original data and creator. */
export function restore(scope: RowScope, ctx: WriteContext, collection: string, key: string, feed: HeldEntry[]): RowView {
  const { sql, manifest } = scope;
  const col = declaredCollection(manifest, collection);
  const found = findRow(sql, collection, key);
  if (found && found.purged) {
    const d = authorize(manifest, ctx.principal, "restore", { collection, row: null });
    if (!d.ok && d.code !== "row_not_found") fail(d);
    throw new RelayError("restore_expired", "This row was purged; it cannot be restored.", { key });
  }
  const row = found && found.deleted_at !== null ? found : null;
  const decision = authorize(manifest, ctx.principal, "restore", { collection, row: row ? rowContext(row) : null });
  if (!decision.ok) fail(decision);
  if (Date.parse(ctx.now) > Date.parse(recoverableUntil(row!.deleted_at!))) {
    throw new RelayError("restore_expired", `This row was deleted more than ${RESTORE_WINDOW_DAYS} days ago.`, { key, deleted_at: row!.deleted_at });
  }
  const data = JSON.parse(row!.data);
  checkQuota(scope, 0, 1);
  try {
    claimUnique(sql, col, key, data);
  } catch (err) {
    if (err instanceof RelayError && err.code === "unique_conflict") {
      throw new RelayError("restore_conflict", `A live row now holds this row's unique value of "${String(err.details?.field)}".`, err.details);
    }
    throw err;
  }
  const stamp = authorOf(ctx.principal);
  const version = row!.version + 1;
  sql.exec(
    "UPDATE _svc_rows SET deleted_at = NULL, deleter_kind = NULL, deleter_id = NULL, version = ?, editor_kind = ?, editor_id = ?, updated_at = ? WHERE rid = ?",
    version, stamp.kind, stamp.id, ctx.now, row!.rid,
  );
  feed.push(appendFeed(sql, { op: "create", collection, key, version, data: row!.data, author: stamp, ts: ctx.now }));
  return viewRow(liveRow(sql, collection, key)!);
}
