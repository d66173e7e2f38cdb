/**
 * Who sees which row and which feed entry. One decision, used by every reader: a get or a
 * write that must not confirm a hidden key (`hides`), the long-poll feed, a socket's `sub`
 * pages and the live fan-out (`visibleEntries`). It is the permission engine's read
 * decision (src/permissions) applied to what the store holds, so a reader can never see
 * more through one door than through another.
 */
import { authorize, type Principal, type RowContext } from "../../src/permissions";
import type { CompiledManifest } from "../../src/manifest";
import type { FeedEntry } from "./contract";
import type { HeldEntry } from "./feed";
import { authorFrom, findRow, rowContext, type StoredRow } from "./values";

/**
 * Whether the read list hides this row (live or deleted) from the principal: the same
 * decision as a get of it. Other refusals (a credential's scope) are not hiding.
 */
export function hides(manifest: CompiledManifest, principal: Principal, row: StoredRow): boolean {
  const decision = authorize(manifest, principal, "get", { collection: row.collection, row: rowContext(row) });
  return !decision.ok && decision.code === "row_not_found";
}

/** What a reader gets for an update that took the row out of its sight: a plain (not purged) delete at the same seq. */
function retraction(entry: FeedEntry): FeedEntry {
  return {
    seq: entry.seq, op: "delete", collection_name: entry.collection_name, row_key: entry.row_key, row_version: entry.row_version,
    data: null, author: entry.author, ts: entry.ts,
  };
}

/**
 * The feed entries this principal may read: the same read decision as a list, per entry.
 * An update that moved the row out of the principal's read scope (it could read the
 * row's previous state, not the new one) becomes a retraction: the same entry as an
 * `op: "delete"` with `data: null` (not `purged`), so a mirror drops its copy. Entries
 * with no recorded previous state (written before it was kept, or scrubbed) are only
 * judged by their new state.
 */
export function visibleEntries(sql: SqlStorage, manifest: CompiledManifest, principal: Principal, held: readonly HeldEntry[]): FeedEntry[] {
  const readers = new Map<string, ((row: RowContext) => boolean) | null>();
  const out: FeedEntry[] = [];
  for (const { entry, prior } of held) {
    let canRead = readers.get(entry.collection_name);
    if (canRead === undefined) {
      const known = Object.hasOwn(manifest.collections, entry.collection_name);
      const decision = known ? authorize(manifest, principal, "list", { collection: entry.collection_name }) : null;
      canRead = decision?.ok ? decision.canRead : null;
      readers.set(entry.collection_name, canRead);
    }
    if (!canRead) continue;
    const stored = findRow(sql, entry.collection_name, entry.row_key);
    const creator = stored ? authorFrom(stored.creator_kind, stored.creator_id) : entry.author;
    if (canRead({ key: entry.row_key, creator, editor: entry.author, data: entry.data })) {
      out.push(entry);
      continue;
    }
    // Judged on the row as it was: an update that took the row out of view is a
    // retraction; a delete reaches everyone who could see the row before it.
    const before = entry.op === "create" ? null : prior;
    if (before && canRead({ key: entry.row_key, creator, editor: before.editor, data: before.data })) out.push(entry.op === "update" ? retraction(entry) : entry);
  }
  return out;
}
