/**
 * Rows written as given rather than as a caller's write: starter rows that come with the
 * deploy creating an app, and rows carried over by an app import (their key, version and
 * stamps as exported). They skip the permission lists and raise no effects, but are
 * checked for schema, size, quota and unique like any write, and get their create entry
 * in the feed.
 */
import { RelayError } from "../../src/errors";
import { machineAuthor, type Author } from "../../src/permissions";
import { declaredCollection, type CompiledCollection } from "../../src/manifest";
import type { PortableRow } from "./contract";
import { appendFeed, type HeldEntry } from "./feed";
import type { RowScope } from "./rows-scope";
import { checkData, checkQuota } from "./rows-checks";
import { applyServerSet } from "./rows-field-rules";
import { claimUnique } from "./rows-unique";
import { byteLength, checkKey, findRow, mintKey } from "./values";

/**
 * A starter row written with the deploy that creates the app (`input_data`): checked
 * like any write (schema, size, unique, quota) but not against the permission lists,
 * stamped as the system.
 */
export function seed(scope: RowScope, collection: string, input: { key?: string; data: unknown }, now: string, feed: HeldEntry[]): void {
  const col = declaredCollection(scope.manifest, collection);
  if (input.key !== undefined) checkKey(input.key);
  const stamp = machineAuthor("system", "seed");
  const data = applyServerSet(scope.sql, col, input.data, null);
  insertAsIs(scope, col, { key: input.key ?? mintKey(), data, version: 1, creator: stamp, editor: stamp, createdAt: now, updatedAt: now }, now, feed, "Two starter rows");
}

/**
 * A row carried over by an app import: its key, data, version and stamps as they were
 * exported. No serverSet step (the data already holds those values) and no effects;
 * schema, size, quota and unique are checked like any write.
 */
export function place(scope: RowScope, row: PortableRow, now: string, feed: HeldEntry[]): void {
  const col = declaredCollection(scope.manifest, row.collection);
  checkKey(row.key);
  if (!Number.isSafeInteger(row.version) || row.version < 1) {
    throw new RelayError("invalid_request", `Row "${row.key}" of "${row.collection}" has version ${String(row.version)}; versions are whole numbers from 1.`, { key: row.key });
  }
  insertAsIs(scope, col, { key: row.key, data: row.data, version: row.version, creator: row.creator, editor: row.editor, createdAt: row.created_at, updatedAt: row.updated_at }, now, feed, "Two imported rows");
}

/** Inserts a row with the version and stamps given (starter and imported rows), and its create entry in the feed. */
function insertAsIs(
  scope: RowScope,
  col: CompiledCollection,
  row: { key: string; data: unknown; version: number; creator: Author; editor: Author; createdAt: string; updatedAt: string },
  now: string, feed: HeldEntry[], clash: string,
): void {
  const { sql } = scope;
  const collection = col.name;
  if (findRow(sql, collection, row.key)) throw new RelayError("conflict", `${clash} of "${collection}" share the key "${row.key}".`, { key: row.key });
  const text = checkData(scope.manifest, col, row.data);
  checkQuota(scope, byteLength(text), 1);
  claimUnique(sql, col, row.key, row.data);
  sql.exec(
    `INSERT INTO _svc_rows (collection, key, data, version, bytes, creator_kind, creator_id, editor_kind, editor_id, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    collection, row.key, text, row.version, byteLength(text), row.creator.kind, row.creator.id, row.editor.kind, row.editor.id, row.createdAt, row.updatedAt,
  );
  feed.push(appendFeed(sql, { op: "create", collection, key: row.key, version: row.version, data: text, author: row.editor, ts: now }));
}
