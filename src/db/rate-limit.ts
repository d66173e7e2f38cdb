/**
 * Fixed-window counters in D1, one upsert per hit (or per group of hits counted together): the per-IP limiter of the identity and
 * invitation routes, and the daily per-owner cap on invitation mail
 * (`apps/invite-mail-cap.ts`). Accurate across isolates (unlike an in-memory counter) and
 * cheap enough for routes that are called a handful of times per agent.
 */
import { RelayError } from "../errors";

export interface WindowHit {
  /** Hits in the current window, this one included. */
  hits: number;
  /** Seconds until the current window ends (at least 1). */
  retryAfter: number;
}

/**
 * Counts one hit (or `by` hits at once, as one upsert still) in `bucket`'s current fixed
 * window; `hits` then includes them all.
 */
export async function countHit(env: { DB: D1Database }, bucket: string, windowSeconds: number, now = Date.now(), by = 1): Promise<WindowHit> {
  const windowMs = windowSeconds * 1000;
  const windowStart = Math.floor(now / windowMs) * windowMs;
  const row = await env.DB.prepare(
    `INSERT INTO rate_limit_windows (bucket, window_start, hits) VALUES (?1, ?2, ?3)
     ON CONFLICT (bucket, window_start) DO UPDATE SET hits = hits + ?3 RETURNING hits`,
  ).bind(bucket, windowStart, by).first<{ hits: number }>();
  return { hits: row?.hits ?? 0, retryAfter: Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000)) };
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
