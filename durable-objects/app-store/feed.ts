/**
 * The change feed: every accepted write appends one entry in the same transaction as the
 * row, with an integer `seq` that only grows. Readers resume from a cursor; entries older
 * than the retention floor are pruned, and a cursor below the floor must resync
 * (re-list, then resume from the newest cursor) — as must a cursor past the newest entry,
 * which this feed never issued (another app's, or an earlier life of this one), so the
 * long-poll and the socket answer it alike. A reader may follow some collections only;
 * its cursor still moves past the other collections' entries. Update entries also keep
 * the row's previous state (`prev`, store-internal: see PriorRow) so a reader the update
 * took the row away from gets a retraction (visibility.ts).
 */
import { RelayError } from "../../src/errors";
import type { Author } from "../../src/permissions";
import type { JsonValue } from "../../src/manifest";
import type { FeedEntry } from "./contract";
import { readMeta, writeMeta } from "./schema";
import { takePage } from "./query";

type StoredEntry = {
  seq: number;
  op: FeedEntry["op"];
  collection: string;
  key: string;
  version: number | null;
  data: string | null;
  author_kind: string;
  author_id: string;
  ts: string;
  prev: string | null;
};

/**
 * What an update or delete entry's row looked like just before the change: enough to tell
 * who could read it then (the creator never changes, so it is not kept). It lives in
 * `_svc_feed.prev` and travels inside the store beside its entry (`HeldEntry`), never in
 * the entry itself, so nothing that serialises entries (socket frames, the long-poll
 * answer, RPC) can leak it.
 */
export interface PriorRow {
  data: JsonValue;
  editor: Author;
}

/** A feed entry as the store holds it: the wire entry, and the row just before it when that was recorded. */
export interface HeldEntry {
  entry: FeedEntry;
  prior: PriorRow | null;
}

/** How many entries the feed keeps; older ones are pruned and raise the floor. */
export const FEED_KEEP = 10_000;

/**
 * Every this many entries, the write that appends one trims the feed back to FEED_KEEP, so
 * it never holds more than FEED_KEEP + FEED_TRIM_EVERY entries. The hourly sweep alone
 * let a busy app's feed grow by an hour of writes (200,000 entries at the soak's rate).
 */
export const FEED_TRIM_EVERY = 1_000;

function held(row: StoredEntry): HeldEntry {
  const entry: FeedEntry = {
    seq: row.seq, op: row.op, collection_name: row.collection, row_key: row.key, row_version: row.version,
    data: row.data === null ? null : JSON.parse(row.data), author: { kind: row.author_kind, id: row.author_id } as Author, ts: row.ts,
    ...(row.op === "delete" && row.data === null ? { purged: true as const } : {}),
  };
  return { entry, prior: row.prev === null || row.prev === undefined ? null : (JSON.parse(row.prev) as PriorRow) };
}

export function appendFeed(
  sql: SqlStorage,
  e: {
    op: FeedEntry["op"]; collection: string; key: string; version: number | null; data: string | null; author: Author; ts: string; purged?: boolean;
    /** The row before an update or a soft delete: its data (JSON text) and last writer. */
    prev?: { data: string; editor: Author };
  },
): HeldEntry {
  const prev = e.prev ? `{"data":${e.prev.data},"editor":${JSON.stringify({ kind: e.prev.editor.kind, id: e.prev.editor.id })}}` : null;
  const data = e.purged ? null : e.data;
  // A purge's previous state is scrubbed like the rest of the row: it is never stored, and
  // lives only on the entry object this call returns, for the fan-out of this commit.
  const { seq } = sql.exec<{ seq: number }>(
    `INSERT INTO _svc_feed (op, collection, key, version, data, author_kind, author_id, ts, prev) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
    e.op, e.collection, e.key, e.version, data, e.author.kind, e.author.id, e.ts, e.purged ? null : prev,
  ).one();
  if (seq % FEED_TRIM_EVERY === 0) pruneFeed(sql);
  // The entry is built from what was just written (only `seq` is the table's): no read back.
  return held({ seq, op: e.op, collection: e.collection, key: e.key, version: e.version, data, author_kind: e.author.kind, author_id: e.author.id, ts: e.ts, prev });
}

/** The highest seq written so far (0 for an empty feed). */
export function headSeq(sql: SqlStorage): number {
  const row = sql.exec<{ seq: number }>("SELECT seq FROM sqlite_sequence WHERE name = '_svc_feed'").toArray()[0];
  return row ? Number(row.seq) : 0;
}

/** Cursors below this were pruned away. */
export function feedFloor(sql: SqlStorage): number {
  return Number(readMeta(sql, "feed_floor") ?? "0");
}

/** A page of held entries, or the resync a cursor the feed cannot resume from needs. */
export type HeldPage = { entries: HeldEntry[]; cursor: number; truncated: boolean } | { resync: true; floor: number; head: number };

/**
 * A page of entries after `since`: at most `limit`, and fewer (truncated) when their data
 * would pass PAGE_BYTES; only entries of `collections` when given. When not truncated the
 * cursor is the feed's head, so it moves past entries the filter left out; when truncated,
 * the last entry read. A `since` below the floor or past the head asks for a resync.
 */
export function readFeed(sql: SqlStorage, since: number, limit: number, collections?: readonly string[]): HeldPage {
  const floor = feedFloor(sql);
  const head = headSeq(sql);
  if (since < floor || since > head) return { resync: true, floor, head };
  const only = collections ? { sql: "AND collection IN (SELECT value FROM json_each(?))", params: [JSON.stringify(collections)] } : { sql: "", params: [] };
  const { page, more } = takePage(
    sql.exec<StoredEntry>(`SELECT * FROM _svc_feed WHERE seq > ? ${only.sql} ORDER BY seq LIMIT ?`, since, ...only.params, limit + 1), limit, (row) => row.data?.length ?? 0,
  );
  const cursor = page.length ? page[page.length - 1].seq : since;
  return { entries: page.map(held), cursor: more ? cursor : Math.max(cursor, head), truncated: more };
}

/** 410 resync_required for a cursor the feed cannot resume from; details say where it can. */
export function resyncRequired(since: number, page: { floor: number; head: number }): RelayError {
  const message = since > page.head
    ? "The cursor is past the feed's newest entry (it was not issued by this app's feed); re-list each collection and resume from details.head."
    : "The cursor is below the feed's retention floor; re-list each collection and resume from details.head.";
  return new RelayError("resync_required", message, { since, floor: page.floor, head: page.head });
}

/**
 * Drops entries beyond `keep`; returns true when the floor moved. A caught-up reader is
 * past the new floor; one still paging from below it gets resync_required on its next page.
 */
export function pruneFeed(sql: SqlStorage, keep = FEED_KEEP): boolean {
  const head = headSeq(sql);
  const floor = head - keep;
  if (floor <= feedFloor(sql)) return false;
  sql.exec("DELETE FROM _svc_feed WHERE seq <= ?", floor);
  writeMeta(sql, "feed_floor", String(floor));
  return true;
}
