/**
 * Fixed-window counters in D1, one upsert per hit (or per group of hits counted together):
 * the per-IP limiter of the identity and invitation routes, the daily per-owner cap on
 * invitation mail (`apps/invite-mail-cap.ts`), and the hourly webhook and ingest caps per
 * app. Accurate across isolates (unlike an in-memory counter) and cheap enough for routes
 * that are called a handful of times per agent.
 */
import { sql, type SQL } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { RelayError } from "../errors";
import { db, type Db } from "./client";
import { rateLimitWindows } from "./schema";

export interface WindowHit {
  /** Hits in the current window, this one included. */
  hits: number;
  /** Seconds until the current window ends (at least 1). */
  retryAfter: number;
}

/** The start (ms) of the fixed window of `windowSeconds` that holds `now`. */
export function windowStartOf(now: number, windowSeconds: number): number {
  const windowMs = windowSeconds * 1000;
  return Math.floor(now / windowMs) * windowMs;
}

/**
 * The upsert that counts `by` hits in `bucket`'s window starting at `windowStart`,
 * answering the hits after it; a statement, so a caller may run it inside a batch with
 * the writes the count decides (webhooks/record.ts).
 */
export function countHitStatement(d: Db, bucket: string, windowStart: number, by: number) {
  return d.insert(rateLimitWindows).values({ bucket, windowStart, hits: by })
    .onConflictDoUpdate(addHits(by))
    .returning({ hits: rateLimitWindows.hits });
}

/** A window already started takes `by` more hits. */
function addHits(by: number) {
  return { target: [rateLimitWindows.bucket, rateLimitWindows.windowStart], set: { hits: sql`${rateLimitWindows.hits} + ${by}` } };
}

/**
 * The upsert that counts one hit in `bucket`'s window starting at `windowStart` only if
 * `where` finds a row of `table` as it runs (INSERT … SELECT): after an insert in the same
 * batch, it counts the row only when the insert did not meet a conflict (ingest/hooks.ts).
 */
export function countHitIfRowStatement(d: Db, bucket: string, windowStart: number, table: SQLiteTable, where: SQL) {
  const hit = d.select({
    bucket: sql<string>`${bucket}`.as("bucket"), windowStart: sql<number>`${windowStart}`.as("window_start"), hits: sql<number>`1`.as("hits"),
  }).from(table).where(where);
  return d.insert(rateLimitWindows).select(hit).onConflictDoUpdate(addHits(1));
}

/**
 * The hits counted so far in `bucket`'s window starting at `windowStart`, as an SQL value
 * (NULL before the first); either may be an SQL expression (a bucket named after a joined row).
 */
export function hitsSoFar(bucket: string | SQL, windowStart: number | SQL): SQL<number | null> {
  return sql<number | null>`(SELECT ${rateLimitWindows.hits} FROM ${rateLimitWindows} WHERE ${rateLimitWindows.bucket} = ${bucket} AND ${rateLimitWindows.windowStart} = ${windowStart})`;
}

/**
 * Counts one hit (or `by` hits at once, as one upsert still) in `bucket`'s current fixed
 * window; `hits` then includes them all.
 */
export async function countHit(env: { DB: D1Database }, bucket: string, windowSeconds: number, now = Date.now(), by = 1): Promise<WindowHit> {
  const windowStart = windowStartOf(now, windowSeconds);
  const [row] = await countHitStatement(db(env), bucket, windowStart, by);
  return { hits: row?.hits ?? 0, retryAfter: Math.max(1, Math.ceil((windowStart + windowSeconds * 1000 - now) / 1000)) };
}

export async function hitRateLimit(
  env: { DB: D1Database },
  bucket: string,
  limit: number,
  windowSeconds: number,
  now = Date.now(),
): Promise<void> {
  if (limit <= 0) return;
  const { hits, retryAfter } = await countHit(env, bucket, windowSeconds, now);
  if (hits > limit) {
    throw new RelayError("rate_limited", `Too many requests from this address; try again in ${retryAfter} s.`, { retry_after: retryAfter, limit }, { "Retry-After": String(retryAfter) });
  }
}

/** Old windows are dead weight; the cron sweep drops them. */
export async function sweepRateLimits(env: { DB: D1Database }, olderThanMs: number, now = Date.now()): Promise<void> {
  await env.DB.prepare("DELETE FROM rate_limit_windows WHERE window_start < ?1").bind(now - olderThanMs).run();
}
