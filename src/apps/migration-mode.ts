/**
 * Migration mode (spec A `POST /v1/apps/:id/migration-mode`, spec B "Migration mode
 * (bounded TTL) silences effects"): while a span is open, every effect a write triggers
 * (notify, webhooks, agent tasks) is recorded silent, and the app's schedules do not
 * fire. A span always ends by itself: its TTL is clamped to MIGRATION_MODE_MAX_SECONDS.
 * Effects are judged by the time of the write that triggered them, so a write made just
 * before the mode ends stays silent even when the effect consumer reaches it later.
 */
import { and, eq, gt, lte } from "drizzle-orm";
import { db, type Db } from "../db/client";
import { appMigrationSpans } from "../db/operate-schema";

export const MIGRATION_MODE_DEFAULT_SECONDS = 3600;
export const MIGRATION_MODE_MIN_SECONDS = 60;
export const MIGRATION_MODE_MAX_SECONDS = 86_400;

type Env = { DB: D1Database };

export interface MigrationModeView {
  app_id: string;
  enabled: boolean;
  started_at: string | null;
  ends_at: string | null;
}

/** The span open at `at`, if any. */
async function openSpan(env: Env, appId: string, at: string) {
  return (await db(env).select().from(appMigrationSpans)
    .where(and(eq(appMigrationSpans.appId, appId), lte(appMigrationSpans.startedAt, at), gt(appMigrationSpans.endsAt, at))).limit(1))[0];
}

export async function migrationMode(env: Env, appId: string, now = new Date()): Promise<MigrationModeView> {
  const span = await openSpan(env, appId, now.toISOString());
  return { app_id: appId, enabled: !!span, started_at: span?.startedAt ?? null, ends_at: span?.endsAt ?? null };
}

/**
 * Turns the mode on for `ttlSeconds` from now (already on: the open span now ends then),
 * or off (closes the open span at this instant; idempotent).
 */
export async function setMigrationMode(
  env: Env, appId: string, input: { enabled: boolean; ttlSeconds: number; reason: string | null }, now = new Date(),
): Promise<MigrationModeView> {
  const at = now.toISOString();
  const span = await openSpan(env, appId, at);
  if (!input.enabled) {
    if (span) await db(env).update(appMigrationSpans).set({ endsAt: at }).where(and(eq(appMigrationSpans.appId, appId), eq(appMigrationSpans.startedAt, span.startedAt)));
    return { app_id: appId, enabled: false, started_at: null, ends_at: null };
  }
  const endsAt = new Date(now.getTime() + input.ttlSeconds * 1000).toISOString();
  if (span) {
    await db(env).update(appMigrationSpans).set({ endsAt, reason: input.reason ?? span.reason })
      .where(and(eq(appMigrationSpans.appId, appId), eq(appMigrationSpans.startedAt, span.startedAt)));
    return { app_id: appId, enabled: true, started_at: span.startedAt, ends_at: endsAt };
  }
  await db(env).insert(appMigrationSpans).values({ appId, startedAt: at, endsAt, reason: input.reason });
  return { app_id: appId, enabled: true, started_at: at, ends_at: endsAt };
}

/** The read of the app's spans that end after `since`; a statement, so the effect consumer can run it in a batch with its other reads. */
export function spansEndingAfter(d: Db, appId: string, since: string) {
  return d.select({ startedAt: appMigrationSpans.startedAt, endsAt: appMigrationSpans.endsAt }).from(appMigrationSpans)
    .where(and(eq(appMigrationSpans.appId, appId), gt(appMigrationSpans.endsAt, since)));
}

/** A test for "was this write made in migration mode?" over spans read by spansEndingAfter (right for writes made after its `since`). */
export function silentIn(spans: ReadonlyArray<{ startedAt: string; endsAt: string }>): (writtenAt: string) => boolean {
  return (writtenAt) => spans.some((span) => span.startedAt <= writtenAt && writtenAt < span.endsAt);
}

/**
 * A test for "was this write made in migration mode?" over the app's spans that end after
 * `since` (one read per app, however many writes are judged).
 */
export async function silentWrites(env: Env, appId: string, since: string): Promise<(writtenAt: string) => boolean> {
  return silentIn(await spansEndingAfter(db(env), appId, since));
}
