/**
 * Who sees which row and which feed entry. One decision, used by every reader: a get or a
 * write that must not confirm a hidden key (`hides`), the long-poll feed, a socket's `sub`
 * pages and the live fan-out (`visibleEntries`). It is the permission engine's read
 * decision (src/permissions) applied to what the store holds, so a reader can never see
 * more through one door than through another. The fan-out (fanout.ts) takes the same
 * decision in parts (`readDecision`, `creatorOf`, `sightOf`), to take it once per reader
 * class and once per entry instead of once per socket.
 */
import { authorize, type Author, type Principal, type RowContext, type RowFilter } from "../../src/permissions";
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
export function retraction(entry: FeedEntry): FeedEntry {
  return {
    seq: entry.seq, op: "delete", collection_name: entry.collection_name, row_key: entry.row_key, row_version: entry.row_version,
    data: null, author: entry.author, ts: entry.ts,
  };
}

/** Which rows of a collection a reader may read: the list decision's filter and its test, or null when it reads none. */
export type ReadDecision = { filter: RowFilter; canRead: (row: RowContext) => boolean } | null;

export function readDecision(manifest: CompiledManifest, principal: Principal, collection: string): ReadDecision {
  if (!Object.hasOwn(manifest.collections, collection)) return null;
  const decision = authorize(manifest, principal, "list", { collection });
  return decision.ok ? { filter: decision.filter, canRead: decision.canRead } : null;
}

/** The creator row-scoped reads compare against: the stored row's, or the entry's author once the row is gone. */
export function creatorOf(sql: SqlStorage, entry: FeedEntry): Author {
  const stored = findRow(sql, entry.collection_name, entry.row_key);
  return stored ? authorFrom(stored.creator_kind, stored.creator_id) : entry.author;
}

/**
 * How one entry reaches a reader of its collection: as it is, as a retraction, or not at
 * all. An update that moved the row out of the reader's read scope (it could read the
 * row's previous state, not the new one) becomes a retraction: the same entry as an
 * `op: "delete"` with `data: null` (not `purged`), so a mirror drops its copy; a delete
 * reaches everyone who could see the row before it. Entries with no recorded previous
 * state (written before it was kept, or scrubbed) are only judged by their new state.
 */
export function sightOf(held: HeldEntry, creator: Author, canRead: (row: RowContext) => boolean): "entry" | "retraction" | null {
  const { entry, prior } = held;
  if (canRead({ key: entry.row_key, creator, editor: entry.author, data: entry.data })) return "entry";
  const before = entry.op === "create" ? null : prior;
  if (before && canRead({ key: entry.row_key, creator, editor: before.editor, data: before.data })) return entry.op === "update" ? "retraction" : "entry";
  return null;
}

/** The feed entries this principal may read: the same read decision as a list, per entry (see `sightOf`). */
export function visibleEntries(sql: SqlStorage, manifest: CompiledManifest, principal: Principal, held: readonly HeldEntry[]): FeedEntry[] {
  const decisions = new Map<string, ReadDecision>();
  const out: FeedEntry[] = [];
  for (const item of held) {
    const name = item.entry.collection_name;
    if (!decisions.has(name)) decisions.set(name, readDecision(manifest, principal, name));
    const decision = decisions.get(name);
    if (!decision) continue;
    const sight = sightOf(item, creatorOf(sql, item.entry), decision.canRead);
    if (sight) out.push(sight === "retraction" ? retraction(item.entry) : item.entry);
  }
  return out;
}
