/**
 * The row reads of one app: get, list (filtered, sorted, paged), count and the list of
 * soft-deleted rows still recoverable. Each is authorized by the pure engine in
 * src/permissions and scoped by its filter in SQL, so a caller never sees a row its read
 * would hide. Kept apart from the writes because reads change nothing and share none of
 * the write checks.
 */
import { authorize } from "../../src/permissions";
import { declaredCollection } from "../../src/manifest";
import type { Principal } from "../../src/permissions";
import type { DeletedRowView, RowPage, RowView } from "./contract";
import { afterCursorSql, compactParams, cursorValues, encodeCursor, filterSql, fragment, orderSql, resolveSort, takePage, whereSql } from "./query";
import { readMeta } from "./schema";
import { fail, liveRow, type RowScope } from "./rows-scope";
import { authorFrom, recoverableUntil, restoreCutoff, rowContext, viewRow, type StoredRow } from "./values";

export function get(scope: RowScope, principal: Principal, collection: string, key: string): RowView {
  const row = liveRow(scope.sql, collection, key);
  const decision = authorize(scope.manifest, principal, "get", { collection, row: row ? rowContext(row) : null });
  if (!decision.ok) fail(decision);
  return viewRow(row!);
}

export function list(scope: RowScope, principal: Principal, collection: string, input: { where?: unknown; sort?: unknown; since?: string; limit: number }): RowPage {
  const { sql, manifest } = scope;
  const col = declaredCollection(manifest, collection);
  const decision = authorize(manifest, principal, "list", { collection });
  if (!decision.ok) fail(decision);
  const where = whereSql(col, input.where);
  const sort = resolveSort(col, input.sort, readMeta(sql, "app_id"));
  const after = input.since ? afterCursorSql(sort, input.since) : fragment`1`;
  const filter = filterSql(decision.filter);
  const query = compactParams(fragment`SELECT * FROM _svc_rows WHERE collection = ${collection} AND deleted_at IS NULL AND (${filter}) AND (${where}) AND (${after})
     ORDER BY ${orderSql(sort)} LIMIT ${input.limit + 1}`);
  const { page, more } = takePage(sql.exec<StoredRow>(query.sql, ...query.params), input.limit, (row) => row.bytes);
  const last = page[page.length - 1];
  return {
    rows: page.map(viewRow),
    // The last page ends the list (WIRE §2.3): a client paging `while (next_cursor)` stops.
    next_cursor: more && last ? encodeCursor(sort, cursorValues(sort, JSON.parse(last.data)), last.rid) : null,
    has_more: more,
  };
}

export function count(scope: RowScope, principal: Principal, collection: string): number {
  declaredCollection(scope.manifest, collection);
  const decision = authorize(scope.manifest, principal, "count", { collection });
  if (!decision.ok) fail(decision);
  const query = compactParams(fragment`SELECT count(*) AS n FROM _svc_rows WHERE collection = ${collection} AND deleted_at IS NULL AND (${filterSql(decision.filter)})`);
  return Number(scope.sql.exec<{ n: number }>(query.sql, ...query.params).one().n);
}

export function listDeleted(scope: RowScope, principal: Principal, collection: string, input: { before?: string; limit: number }): { rows: DeletedRowView[]; next_before: string | null } {
  declaredCollection(scope.manifest, collection);
  const decision = authorize(scope.manifest, principal, "listDeleted", { collection });
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
  const { page, more } = takePage(scope.sql.exec<StoredRow>(query.sql, ...query.params), input.limit, (row) => row.bytes);
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
