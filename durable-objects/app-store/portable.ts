/**
 * The read half of an app export (src/apps/archive): live rows of every collection in
 * storage order (`rid`), a page at a time, with their stamps exactly as stored, so the
 * Worker can stream an archive without holding every row at once. The write half is
 * `place` (rows-place.ts), which checks each row like any other write.
 */
import type { PortablePage } from "./contract";
import { takePage } from "./query";
import { authorFrom, type StoredRow } from "./values";

export function exportPage(sql: SqlStorage, after: number, limit: number): PortablePage {
  const cursor = sql.exec<StoredRow>("SELECT * FROM _svc_rows WHERE deleted_at IS NULL AND rid > ? ORDER BY rid LIMIT ?", after, limit + 1);
  const { page, more } = takePage(cursor, limit, (row) => row.bytes);
  return {
    rows: page.map((row) => ({
      collection: row.collection, key: row.key, data: JSON.parse(row.data), version: row.version,
      creator: authorFrom(row.creator_kind, row.creator_id), editor: authorFrom(row.editor_kind, row.editor_id),
      created_at: row.created_at, updated_at: row.updated_at,
    })),
    next_after: more && page.length > 0 ? page[page.length - 1].rid : null,
  };
}
