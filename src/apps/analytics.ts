/**
 * Page analytics (spec A `GET /v1/apps/:id/analytics`): each served page counts a view in
 * a rollup per app, UTC day, hour, country and referrer host. App origins set no cookies,
 * so a unique visitor is a hash of the day's random salt, the app, the address and the
 * user agent; the salt is deleted once its day is over and only today's hashes are kept,
 * so no address is ever stored and yesterday's hashes cannot be recomputed. A visitor
 * counts as unique in the bucket of their first view of the day, so summing buckets
 * gives the day's uniques.
 */
import { and, eq, gte, lt, sql } from "drizzle-orm";
import { db } from "../db/client";
import { analyticsSalts, appPageViews, appVisitorDays } from "../db/operate-schema";
import { randomHex, sha256Hex } from "../auth/tokens";

type Env = { DB: D1Database };

export const ANALYTICS_DEFAULT_DAYS = 7;
export const ANALYTICS_MAX_DAYS = 90;

export interface PageView {
  appId: string;
  /** The app's own origin: a referrer from it is the visitor moving inside the app (no referrer). */
  appOrigin: string;
  address: string;
  userAgent: string;
  country: string;
  referrer: string | null;
}

/** The referrer's host, or "" when there is none, it is the app itself, or it does not parse. */
export function referrerHost(referrer: string | null, appOrigin: string): string {
  if (!referrer) return "";
  try {
    const url = new URL(referrer);
    return url.origin === appOrigin ? "" : url.host.toLowerCase().slice(0, 253);
  } catch {
    return "";
  }
}

/** Today's salt, made on first use; earlier days' salts and hashes go at the same moment. */
async function saltOf(env: Env, day: string): Promise<string> {
  const known = (await db(env).select({ salt: analyticsSalts.salt }).from(analyticsSalts).where(eq(analyticsSalts.day, day)))[0];
  if (known) return known.salt;
  await db(env).insert(analyticsSalts).values({ day, salt: randomHex(32) }).onConflictDoNothing();
  await db(env).batch([
    db(env).delete(analyticsSalts).where(lt(analyticsSalts.day, day)),
    db(env).delete(appVisitorDays).where(lt(appVisitorDays.day, day)),
  ]);
  return (await db(env).select({ salt: analyticsSalts.salt }).from(analyticsSalts).where(eq(analyticsSalts.day, day)))[0]!.salt;
}

export async function recordPageView(env: Env, view: PageView, now = new Date()): Promise<void> {
  const day = now.toISOString().slice(0, 10);
  const visitorHash = await sha256Hex(`${await saltOf(env, day)}|${view.appId}|${view.address}|${view.userAgent}`);
  const fresh = await db(env).insert(appVisitorDays).values({ appId: view.appId, day, visitorHash }).onConflictDoNothing().returning({ day: appVisitorDays.day });
  const unique = fresh.length;
  await db(env).insert(appPageViews).values({
    appId: view.appId, day, hour: now.getUTCHours(), country: view.country.slice(0, 8), referrer: referrerHost(view.referrer, view.appOrigin), views: 1, uniques: unique,
  }).onConflictDoUpdate({
    target: [appPageViews.appId, appPageViews.day, appPageViews.hour, appPageViews.country, appPageViews.referrer],
    set: { views: sql`${appPageViews.views} + 1`, uniques: sql`${appPageViews.uniques} + ${unique}` },
  });
}

interface Counts {
  views: number;
  uniques: number;
}

function tally<K extends string | number>(rows: Array<Counts & Record<string, unknown>>, keyOf: (row: Counts & Record<string, unknown>) => K): Map<K, Counts> {
  const out = new Map<K, Counts>();
  for (const row of rows) {
    const key = keyOf(row);
    const counts = out.get(key) ?? { views: 0, uniques: 0 };
    counts.views += Number(row.views);
    counts.uniques += Number(row.uniques);
    out.set(key, counts);
  }
  return out;
}

function ranked<K extends string>(map: Map<K, Counts>, name: string): Array<Record<string, unknown>> {
  return [...map].sort((a, b) => b[1].views - a[1].views || (a[0] < b[0] ? -1 : 1)).map(([key, counts]) => ({ [name]: key, ...counts }));
}

/** The UTC days ending today, oldest first. */
export function lastDays(days: number, now = new Date()): string[] {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return Array.from({ length: days }, (_, i) => new Date(today - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10));
}

/**
 * The rollups over the last `days` UTC days: totals, every day (zero-filled), the 24 UTC
 * hours, and countries and referrers by views ("" is unknown or direct).
 */
export async function analyticsReport(env: Env, appId: string, days: number, now = new Date()) {
  const window = lastDays(days, now);
  const rows = await db(env).select().from(appPageViews).where(and(eq(appPageViews.appId, appId), gte(appPageViews.day, window[0])));
  const byDay = tally(rows, (row) => row.day as string);
  const byHour = tally(rows, (row) => row.hour as number);
  const totals = [...byDay.values()].reduce((sum, c) => ({ views: sum.views + c.views, uniques: sum.uniques + c.uniques }), { views: 0, uniques: 0 });
  return {
    app_id: appId,
    from: window[0],
    to: window[window.length - 1],
    totals,
    days: window.map((day) => ({ day, ...(byDay.get(day) ?? { views: 0, uniques: 0 }) })),
    hours: Array.from({ length: 24 }, (_, hour) => ({ hour, ...(byHour.get(hour) ?? { views: 0, uniques: 0 }) })),
    countries: ranked(tally(rows, (row) => row.country as string), "country"),
    referrers: ranked(tally(rows, (row) => row.referrer as string), "referrer"),
  };
}
