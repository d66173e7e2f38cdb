/**
 * The schedules engine's records in D1 (src/db/schedules-schema.ts): which apps are due a
 * scan, the claim that lets one sweep scan an app for a local day, and the claim that lets
 * one (rule, row, date) fire, within the app's daily cap for its action. Both claims are
 * single conditional statements, so two sweeps running at once never both act.
 */
import { and, eq, inArray, isNotNull, sql } from "drizzle-orm";
import { inList } from "../../db/in-list";
import { db } from "../../db/client";
import { apps, appVersions } from "../../db/apps-schema";
import { scheduleFirings, scheduleScans } from "../../db/schedules-schema";
import { notPlaceholderOwned, type AppRow } from "../../db/apps";
import { addDays, dueScanDay, wallClock, zoneOrUtc } from "./local-day";

/** A scan claimed but never finished (its sweep died) is taken over after this. */
export const SCAN_LEASE_MS = 15 * 60_000;
/** Firings are kept this many days past their date: long after a past date could fire again. */
const FIRING_RETENTION_DAYS = 35;

export type ScheduleActionKind = "email" | "webhook";

export interface DueScan {
  app: AppRow;
  /** The app's zone (UTC when it has none). */
  zone: string;
  /** The local day to scan for, `YYYY-MM-DD`. */
  day: string;
}

/**
 * Live apps (active or dormant, with a version) whose live manifest declares schedules,
 * whose local 08:00 has passed and that were not scanned for their local today (or whose
 * scan was left unfinished past its lease), at most `batch` of them; the next sweep takes
 * the rest. Apps without schedule rules are never candidates, so they cannot crowd the
 * batch and delay the apps that have some.
 */
export async function appsDueForScan(env: Env, now: number, batch: number): Promise<DueScan[]> {
  const candidates = await db(env)
    .select({ id: apps.id, timezone: apps.timezone, scannedDay: scheduleScans.localDate, startedAt: scheduleScans.startedAt, finishedAt: scheduleScans.finishedAt })
    .from(apps)
    .innerJoin(appVersions, and(eq(appVersions.appId, apps.id), eq(appVersions.version, apps.currentVersion)))
    .leftJoin(scheduleScans, eq(scheduleScans.appId, apps.id))
    .where(and(
      inArray(apps.status, ["active", "dormant"]),
      isNotNull(apps.currentVersion),
      // A half-made app (an import filling it, a create seeding it) is not scanned (nor its day marked): it is scanned once whole.
      notPlaceholderOwned,
      sql`coalesce(json_array_length(${appVersions.manifestJson}, '$."x-service-manifest".schedules'), 0) > 0`,
    ));
  const due: Array<{ id: string; zone: string; day: string }> = [];
  for (const candidate of candidates) {
    const zone = zoneOrUtc(candidate.timezone);
    const day = dueScanDay(now, zone);
    if (day === null) continue;
    const done = candidate.scannedDay === day && (candidate.finishedAt !== null || (candidate.startedAt ?? 0) > Date.now() - SCAN_LEASE_MS);
    if (!done) due.push({ id: candidate.id, zone, day });
    if (due.length >= batch) break;
  }
  if (due.length === 0) return [];
  const rows = await db(env).select().from(apps).where(inList(apps.id, due.map((d) => d.id)));
  const byId = new Map(rows.map((row) => [row.id, row]));
  return due.flatMap(({ id, zone, day }) => {
    const app = byId.get(id);
    return app ? [{ app, zone, day }] : [];
  });
}

/**
 * Claims the app's scan for `day`: true for the one caller that moved the app's record to
 * that day (or took over a scan of it left unfinished past its lease), false for any other.
 */
export async function claimScan(env: Env, appId: string, day: string): Promise<boolean> {
  const startedAt = Date.now();
  const claimed = await db(env).insert(scheduleScans).values({ appId, localDate: day, startedAt, finishedAt: null })
    .onConflictDoUpdate({
      target: scheduleScans.appId,
      set: { localDate: day, startedAt, finishedAt: null },
      setWhere: sql`${scheduleScans.localDate} != ${day} OR (${scheduleScans.finishedAt} IS NULL AND ${scheduleScans.startedAt} < ${startedAt - SCAN_LEASE_MS})`,
    }).returning({ appId: scheduleScans.appId });
  return claimed.length > 0;
}

/** Closes the app's scan for `day`: a later sweep the same day does nothing. */
export async function finishScan(env: Env, appId: string, day: string): Promise<void> {
  await db(env).update(scheduleScans).set({ finishedAt: Date.now() })
    .where(and(eq(scheduleScans.appId, appId), eq(scheduleScans.localDate, day)));
}

/** How many firings of each action the app has made on `day`. */
export async function firingsOn(env: Env, appId: string, day: string): Promise<Record<ScheduleActionKind, number>> {
  const counts = await db(env).select({ action: scheduleFirings.action, fired: sql<number>`count(*)` }).from(scheduleFirings)
    .where(and(eq(scheduleFirings.appId, appId), eq(scheduleFirings.localDate, day)))
    .groupBy(scheduleFirings.action);
  const fired: Record<ScheduleActionKind, number> = { email: 0, webhook: 0 };
  for (const { action, fired: count } of counts) fired[action] = Number(count);
  return fired;
}

export interface Firing {
  appId: string;
  ruleId: string;
  rowKey: string;
  day: string;
  action: ScheduleActionKind;
}

/**
 * Claims one firing: true when this (rule, row, day) had not fired and the app's firings
 * of this action on that day are still under `cap`, so the caller acts on it exactly once.
 */
export async function claimFiring(env: Env, firing: Firing, cap: number): Promise<boolean> {
  const claimed = await env.DB.prepare(
    `INSERT INTO schedule_firings (app_id, rule_id, row_key, local_date, action, fired_at)
     SELECT ?1, ?2, ?3, ?4, ?5, ?6
     WHERE (SELECT count(*) FROM schedule_firings WHERE app_id = ?1 AND local_date = ?4 AND action = ?5) < ?7
     ON CONFLICT DO NOTHING RETURNING app_id`,
  ).bind(firing.appId, firing.ruleId, firing.rowKey, firing.day, firing.action, new Date().toISOString(), cap).all();
  return claimed.results.length > 0;
}

/** Drops firings long past their date, and the scan records of apps that no longer exist. */
export async function pruneLedger(env: Env, now: number): Promise<void> {
  const cutoff = addDays(wallClock(now, "UTC").date, -FIRING_RETENTION_DAYS);
  await env.DB.batch([
    ...(cutoff === null ? [] : [env.DB.prepare("DELETE FROM schedule_firings WHERE local_date < ?1").bind(cutoff)]),
    env.DB.prepare("DELETE FROM schedule_scans WHERE app_id NOT IN (SELECT id FROM apps)"),
  ]);
}
