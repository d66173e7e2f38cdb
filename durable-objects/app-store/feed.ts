/**
 * The change feed: every accepted write appends one entry in the same transaction as the
 * row, with an integer `seq` that only grows. Readers resume from a cursor; entries older
 * than the retention floor are pruned, and a cursor below the floor must resync
 * (re-list, then resume from the newest cursor).
 */
import type { Author } from "../../src/permissions";
import type { JsonValue } from "../../src/manifest";
import { readMeta, writeMeta } from "./schema";
import { takePage } from "./query";

/** WIRE §2.4's FeedEntry, identical over long-poll and socket. */
export interface FeedEntry {
  seq: number;
  op: "create" | "update" | "delete";
  collection_name: string;
  row_key: string;
  row_version: number | null;
  data: JsonValue;
  author: Author;
  ts: string;
  /** Present on the audited delete entry a purge writes. */
  purged?: true;
}

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
};

/** How many entries the feed keeps; older ones are pruned and raise the floor. */
export const FEED_KEEP = 10_000;

function view(row: StoredEntry): FeedEntry {
  return {
    seq: row.seq, op: row.op, collection_name: row.collection, row_key: row.key, row_version: row.version,
    data: row.data === null ? null : JSON.parse(row.data), author: { kind: row.author_kind, id: row.author_id } as Author, ts: row.ts,
    ...(row.op === "delete" && row.data === null ? { purged: true as const } : {}),
  };
}

export function appendFeed(
  sql: SqlStorage,
  e: { op: FeedEntry["op"]; collection: string; key: string; version: number | null; data: string | null; author: Author; ts: string; purged?: boolean },
): FeedEntry {
  const row = sql.exec<StoredEntry>(
    `INSERT INTO _svc_feed (op, collection, key, version, data, author_kind, author_id, ts) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
    e.op, e.collection, e.key, e.version, e.purged ? null : e.data, e.author.kind, e.author.id, e.ts,
  ).one();
  return view(row);
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

export type FeedPage = { entries: FeedEntry[]; cursor: number; truncated: boolean } | { resync: true };

/** A page of entries after `since`: at most `limit`, and fewer (truncated) when their data would pass PAGE_BYTES. */
export function readFeed(sql: SqlStorage, since: number, limit: number): FeedPage {
  if (since < feedFloor(sql)) return { resync: true };
  const { page, more } = takePage(
    sql.exec<StoredEntry>("SELECT * FROM _svc_feed WHERE seq > ? ORDER BY seq LIMIT ?", since, limit + 1), limit, (row) => row.data?.length ?? 0,
  );
  const cursor = page.length ? page[page.length - 1].seq : Math.max(since, 0);
  return { entries: page.map(view), cursor: more ? cursor : Math.max(cursor, headSeq(sql)), truncated: more };
}

/** Drops entries beyond FEED_KEEP; returns true when the floor moved (watchers must resync). */
export function pruneFeed(sql: SqlStorage, keep = FEED_KEEP): boolean {
  const head = headSeq(sql);
  const floor = head - keep;
  if (floor <= feedFloor(sql)) return false;
  sql.exec("DELETE FROM _svc_feed WHERE seq <= ?", floor);
  writeMeta(sql, "feed_floor", String(floor));
  return true;
}
