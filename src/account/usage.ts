/**
 * Account usage (`/v1/self/usage*`). Meters are counted live, never cached: apps owned
 * (live, against MAX_APPS_PER_ACCOUNT), and per live app its rows and bytes from the
 * app's AppStore (against MAX_ROWS_PER_APP and MAX_STORAGE_BYTES_PER_APP), summed for the
 * account. Flows are things that happen (mail sent for an app, webhook deliveries, ...):
 * each feature that produces one calls `recordFlow`, which adds to a counter per owner,
 * app, UTC hour and metric; the summary totals the current UTC month and the series
 * buckets by day or hour. A metric nobody has recorded yet simply counts zero. An app's
 * own usage reads the same counters narrowed to the app.
 */
import { and, eq, gte, sql } from "drizzle-orm";
import type { Config } from "../config";
import { db, type Db } from "../db/client";
import { usageFlows } from "../db/account-schema";
import { listApps } from "../db/apps";
import { appStore } from "../apps/store";

/** The flow metrics the relay knows; features record them as they produce flows. */
export const FLOW_METRICS = ["emails", "push_notifications", "webhook_deliveries", "ingest_deliveries", "agent_tasks"] as const;
export type FlowMetric = (typeof FLOW_METRICS)[number];

function hourKey(at: Date): string {
  return at.toISOString().slice(0, 13);
}

export interface FlowInput {
  humanId: string;
  appId: string;
  metric: FlowMetric;
  count?: number;
  at?: Date;
}

/** The upsert that adds `count` to the owner's counter for this app, metric and UTC hour: a statement, for a caller's batch. */
export function recordFlowStatement(d: Db, input: FlowInput) {
  const count = input.count ?? 1;
  return d.insert(usageFlows).values({ humanId: input.humanId, appId: input.appId, hour: hourKey(input.at ?? new Date()), metric: input.metric, count })
    .onConflictDoUpdate({ target: [usageFlows.humanId, usageFlows.hour, usageFlows.metric, usageFlows.appId], set: { count: sql`${usageFlows.count} + ${count}` } });
}

/** Adds `count` to the owner's counter for this app, metric and the current UTC hour. */
export async function recordFlow(env: { DB: D1Database }, input: FlowInput): Promise<void> {
  await recordFlowStatement(db(env), input);
}

function zeroFlows(): Record<FlowMetric, number> {
  return Object.fromEntries(FLOW_METRICS.map((m) => [m, 0])) as Record<FlowMetric, number>;
}

/** Flows are the account's, or only one app's when `appId` is given (`/v1/apps/:id/usage`). */
async function flowRows(env: Env, humanId: string, fromHour: string, appId?: string) {
  return db(env).select({ hour: usageFlows.hour, metric: usageFlows.metric, count: sql<number>`sum(${usageFlows.count})` }).from(usageFlows)
    .where(and(eq(usageFlows.humanId, humanId), gte(usageFlows.hour, fromHour), appId === undefined ? undefined : eq(usageFlows.appId, appId)))
    .groupBy(usageFlows.hour, usageFlows.metric);
}

function addTo(target: Record<string, number>, metric: string, n: number): void {
  target[metric] = (target[metric] ?? 0) + Number(n);
}

function monthStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

async function monthToDate(env: Env, humanId: string, now: Date, appId?: string): Promise<{ start: string; flows: Record<string, number> }> {
  const start = monthStart(now);
  const flows: Record<string, number> = zeroFlows();
  for (const row of await flowRows(env, humanId, hourKey(start), appId)) addTo(flows, row.metric, row.count);
  return { start: start.toISOString(), flows };
}

export async function usageSummary(env: Env, cfg: Config, humanId: string, now = new Date()) {
  const owned = await listApps(env, humanId, { status: "live", limit: 1000 });
  const perApp = await Promise.all(owned.map(async (app) => ({ app, usage: await appStore(env, app.id).usage() })));
  const rowLimit = cfg.limits.MAX_ROWS_PER_APP;
  const storageLimit = cfg.limits.MAX_STORAGE_BYTES_PER_APP;
  return {
    meters: {
      apps: { used: owned.length, limit: cfg.limits.MAX_APPS_PER_ACCOUNT },
      rows: { used: perApp.reduce((n, a) => n + a.usage.rowCount, 0), limit_per_app: rowLimit },
      storage_bytes: { used: perApp.reduce((n, a) => n + a.usage.storageBytes, 0), limit_per_app: storageLimit },
    },
    apps: perApp.map(({ app, usage }) => ({
      app_id: app.id, slug: app.slug, rows: usage.rowCount, row_limit: rowLimit, storage_bytes: usage.storageBytes, storage_limit: storageLimit,
    })),
    month: await monthToDate(env, humanId, now),
  };
}

export type Granularity = "day" | "hour";

/**
 * The flow series ending now: `days` whole UTC days (granularity day, oldest first,
 * today included) or the last `days * 24` hours (granularity hour), every bucket present
 * with every known metric (zero when nothing happened), plus month-to-date totals.
 */
export async function usageSeries(env: Env, humanId: string, granularity: Granularity, days: number, now = new Date(), appId?: string) {
  const buckets: string[] = [];
  if (granularity === "day") {
    const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
    for (let i = days - 1; i >= 0; i--) buckets.push(new Date(today - i * 86_400_000).toISOString().slice(0, 10));
  } else {
    const thisHour = Math.floor(now.getTime() / 3_600_000) * 3_600_000;
    for (let i = days * 24 - 1; i >= 0; i--) buckets.push(hourKey(new Date(thisHour - i * 3_600_000)));
  }
  const fromHour = granularity === "day" ? `${buckets[0]}T00` : buckets[0];
  const byBucket = new Map<string, Record<string, number>>(buckets.map((b) => [b, zeroFlows()]));
  for (const row of await flowRows(env, humanId, fromHour, appId)) {
    const bucket = granularity === "day" ? row.hour.slice(0, 10) : row.hour;
    const target = byBucket.get(bucket);
    if (target) addTo(target, row.metric, row.count);
  }
  const points = buckets.map((b) => ({ start: granularity === "day" ? `${b}T00:00:00.000Z` : `${b}:00:00.000Z`, flows: byBucket.get(b)! }));
  return { granularity, start: points[0].start, end: now.toISOString(), points, month_to_date: await monthToDate(env, humanId, now, appId) };
}

/**
 * One app's usage (`GET /v1/apps/:id/usage`): its rows and bytes against the per-app
 * limits, and its flows over the last `days` UTC days from the same counters as the
 * account's: totals for the window, the daily series and month-to-date.
 */
export async function appUsage(env: Env, cfg: Config, app: { id: string; ownerHumanId: string }, days: number, now = new Date()) {
  const [store, series] = await Promise.all([appStore(env, app.id).usage(), usageSeries(env, app.ownerHumanId, "day", days, now, app.id)]);
  const totals: Record<string, number> = zeroFlows();
  for (const point of series.points) for (const [metric, n] of Object.entries(point.flows)) addTo(totals, metric, n);
  return {
    app_id: app.id,
    meters: {
      rows: { used: store.rowCount, limit: cfg.limits.MAX_ROWS_PER_APP },
      storage_bytes: { used: store.storageBytes, limit: cfg.limits.MAX_STORAGE_BYTES_PER_APP },
    },
    totals,
    ...series,
  };
}

export async function deleteHumanFlows(env: Env, humanId: string): Promise<void> {
  await db(env).delete(usageFlows).where(eq(usageFlows.humanId, humanId));
}
