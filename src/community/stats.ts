/**
 * The publisher's analytics (spec A `GET /v1/publisher/analytics`): per template snapshot
 * and UTC day, how many tries (a config-contract fetch or an install), installs and
 * gallery views it had, and the tries and installs per caller country. Counting is an
 * upsert per table; reading sums the days asked for.
 */
import { and, eq, gte, sql } from "drizzle-orm";
import { db } from "../db/client";
import { templateDailyStats, templateRegionStats } from "../db/community-installs-schema";
import { templateSnapshots } from "../db/community-schema";

type Env = { DB: D1Database };

export interface TemplateEvent {
  tries?: number;
  installs?: number;
  views?: number;
}

function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** Adds the event's counts to today's rows of the snapshot; `region` is the caller's country code ("" when unknown). */
export async function countTemplateEvent(env: Env, snapshot: { id: string; publisherHumanId: string }, event: TemplateEvent, region = ""): Promise<void> {
  const tries = event.tries ?? 0;
  const installs = event.installs ?? 0;
  const views = event.views ?? 0;
  const day = utcDay(new Date());
  const d = db(env);
  await d.batch([
    d.insert(templateDailyStats)
      .values({ snapshotId: snapshot.id, publisherHumanId: snapshot.publisherHumanId, day, tries, installs, views })
      .onConflictDoUpdate({
        target: [templateDailyStats.snapshotId, templateDailyStats.day],
        set: {
          tries: sql`${templateDailyStats.tries} + ${tries}`,
          installs: sql`${templateDailyStats.installs} + ${installs}`,
          views: sql`${templateDailyStats.views} + ${views}`,
        },
      }),
    d.insert(templateRegionStats)
      .values({ snapshotId: snapshot.id, publisherHumanId: snapshot.publisherHumanId, day, region: region.slice(0, 8), tries, installs })
      .onConflictDoUpdate({
        target: [templateRegionStats.snapshotId, templateRegionStats.day, templateRegionStats.region],
        set: { tries: sql`${templateRegionStats.tries} + ${tries}`, installs: sql`${templateRegionStats.installs} + ${installs}` },
      }),
  ]);
}

/** Tries and installs per country over the window, most tries first ("" is unknown). */
async function regionTotals(env: Env, publisherHumanId: string, since: string) {
  const rows = await db(env).select({
    region: templateRegionStats.region, tries: sql<number>`sum(${templateRegionStats.tries})`, installs: sql<number>`sum(${templateRegionStats.installs})`,
  }).from(templateRegionStats)
    .where(and(eq(templateRegionStats.publisherHumanId, publisherHumanId), gte(templateRegionStats.day, since)))
    .groupBy(templateRegionStats.region);
  return rows.map((r) => ({ region: r.region, tries: Number(r.tries), installs: Number(r.installs) }))
    .filter((r) => r.tries > 0 || r.installs > 0)
    .sort((a, b) => b.tries - a.tries || b.installs - a.installs || a.region.localeCompare(b.region));
}

interface Counts {
  tries: number;
  installs: number;
  views: number;
}

function conversion(counts: Counts): number | null {
  return counts.tries === 0 ? null : Math.round((counts.installs / counts.tries) * 1000) / 1000;
}

/**
 * The publisher's totals over the last `days` UTC days (today included): overall, per
 * template snapshot, per country, and a daily series with every day present (zeros included).
 */
export async function publisherAnalytics(env: Env, publisherHumanId: string, days: number) {
  const today = new Date();
  const from = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - (days - 1)));
  const rows = await db(env).select({
    snapshotId: templateDailyStats.snapshotId, day: templateDailyStats.day, tries: templateDailyStats.tries, installs: templateDailyStats.installs,
    views: templateDailyStats.views, slug: templateSnapshots.slug, version: templateSnapshots.version, name: templateSnapshots.name,
  }).from(templateDailyStats)
    .leftJoin(templateSnapshots, eq(templateSnapshots.id, templateDailyStats.snapshotId))
    .where(and(eq(templateDailyStats.publisherHumanId, publisherHumanId), gte(templateDailyStats.day, utcDay(from))));

  const totals: Counts = { tries: 0, installs: 0, views: 0 };
  const perTemplate = new Map<string, Counts & { snapshot_id: string; name: string | null; slug: string | null; version: string | null }>();
  const perDay = new Map<string, Counts>();
  for (const row of rows) {
    const template = perTemplate.get(row.snapshotId) ?? { snapshot_id: row.snapshotId, name: row.name, slug: row.slug, version: row.version, tries: 0, installs: 0, views: 0 };
    const day = perDay.get(row.day) ?? { tries: 0, installs: 0, views: 0 };
    for (const counts of [totals, template, day]) {
      counts.tries += row.tries;
      counts.installs += row.installs;
      counts.views += row.views;
    }
    perTemplate.set(row.snapshotId, template);
    perDay.set(row.day, day);
  }
  const series = [];
  for (let i = 0; i < days; i++) {
    const day = utcDay(new Date(from.getTime() + i * 86_400_000));
    series.push({ day, ...(perDay.get(day) ?? { tries: 0, installs: 0, views: 0 }) });
  }
  return {
    days, since: utcDay(from), ...totals, conversion: conversion(totals), regions: await regionTotals(env, publisherHumanId, utcDay(from)),
    templates: [...perTemplate.values()].map((t) => ({ ...t, conversion: conversion(t) })).sort((a, b) => b.installs - a.installs || b.tries - a.tries),
    series,
  };
}
