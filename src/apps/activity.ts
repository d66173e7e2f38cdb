/**
 * An app's `last_activity_at` (the app list is newest activity first) moves on row writes
 * too, not only on deploys and transfers. A row write must not wait for a D1 write, so
 * the time is written after the response (waitUntil), at most once a minute per app per
 * isolate, and the UPDATE itself only moves a time that is older than that minute: a busy
 * app costs D1 about one write a minute, and an idle one none.
 */
import { errorLogLine } from "../db/query-errors";
import type { Context, MiddlewareHandler } from "hono";

export const ACTIVITY_RESOLUTION_MS = 60_000;
const MAX_REMEMBERED_APPS = 10_000;
const lastNoted = new Map<string, number>();

/** Records that `appId` was written to at `now`, unless this isolate did so within the last minute. */
export function noteActivity(env: { DB: D1Database }, waitUntil: (work: Promise<unknown>) => void, appId: string, now = Date.now()): void {
  const noted = lastNoted.get(appId);
  if (noted !== undefined && now - noted < ACTIVITY_RESOLUTION_MS) return;
  if (lastNoted.size >= MAX_REMEMBERED_APPS) lastNoted.clear();
  lastNoted.set(appId, now);
  const at = new Date(now).toISOString();
  const staleBefore = new Date(now - ACTIVITY_RESOLUTION_MS).toISOString();
  waitUntil(env.DB.prepare("UPDATE apps SET last_activity_at = ?2 WHERE id = ?1 AND last_activity_at < ?3 AND status = 'active'")
    .bind(appId, at, staleBefore).run()
    .catch((err: unknown) => console.error("recording app activity failed", appId, errorLogLine(err))));
}

const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * Middleware for the row routes of one door: after a successful write (a 2xx answer to a
 * write verb), notes activity on the app `appIdOf` names.
 */
export function rowWriteActivity<E extends { Bindings: { DB: D1Database } }>(appIdOf: (c: Context<E>) => string | undefined): MiddlewareHandler<E> {
  return async (c, next) => {
    await next();
    if (!WRITE_METHODS.has(c.req.method) || c.res.status < 200 || c.res.status >= 300) return;
    const appId = appIdOf(c);
    if (appId) noteActivity(c.env, (work) => c.executionCtx.waitUntil(work), appId);
  };
}
