/**
 * What an app's owner learns about it (spec A; shapes ours, CONTRACT §3): page analytics
 * rolled up from served pages (src/apps/analytics.ts) and usage, the same meters and flow
 * counters as `/v1/self/usage` narrowed to the app (src/account/usage.ts). Spec A lists
 * these as AKOM; this relay has no member sessions on /v1, so the owner's side reads them.
 * The screenshot is a rendering of the live page when the Browser Rendering binding is
 * configured, else the brand card (src/apps/screenshot.ts), cached per version.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppEnv } from "../types";
import { config } from "../../config";
import { ANALYTICS_DEFAULT_DAYS, ANALYTICS_MAX_DAYS, analyticsReport } from "../../apps/analytics";
import { FLOW_METRICS, appUsage } from "../../account/usage";
import { SCREENSHOT_SIZES, screenshot, type ScreenshotSize } from "../../apps/screenshot";
import { RelayError } from "../../errors";
import { ownedApp, requireLive } from "./app-access";
import { errors, isoTime } from "./schemas";

const counts = { views: z.number().int(), uniques: z.number().int() };
const analyticsView = z.object({
  app_id: z.string(), from: z.string(), to: z.string(), totals: z.object(counts),
  days: z.array(z.object({ day: z.string(), ...counts })),
  hours: z.array(z.object({ hour: z.number().int(), ...counts })),
  countries: z.array(z.object({ country: z.string(), ...counts })),
  referrers: z.array(z.object({ referrer: z.string(), ...counts })),
}).meta({ title: "AppAnalytics" });

const flows = z.record(z.enum(FLOW_METRICS), z.number());
const usageView = z.object({
  app_id: z.string(),
  meters: z.object({ rows: z.object({ used: z.number(), limit: z.number() }), storage_bytes: z.object({ used: z.number(), limit: z.number() }) }),
  totals: flows,
  granularity: z.literal("day"), start: isoTime, end: isoTime,
  points: z.array(z.object({ start: isoTime, flows })),
  month_to_date: z.object({ start: isoTime, flows }),
}).meta({ title: "AppUsage" });

const days = (max: number, fallback: number) => z.strictObject({ days: z.coerce.number().int().min(1).max(max).default(fallback) });
const soft = { 410: { description: "soft_deleted: the app is in the trash" } };

export function appInsightRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "get", path: "/v1/apps/:id/analytics", tag: "apps", auth: "owner",
    summary: `Page views and unique visitors of the app's served pages over the last days UTC days (default ${ANALYTICS_DEFAULT_DAYS}, at most ${ANALYTICS_MAX_DAYS}): totals, per day, per UTC hour, per country and per referrer host ("" is direct or unknown). Uniques come from a daily salted hash; no address is stored`,
    query: days(ANALYTICS_MAX_DAYS, ANALYTICS_DEFAULT_DAYS),
    responses: { 200: { description: "The rollups", schema: analyticsView }, ...errors(400, 401, 404), ...soft },
  }, async (c, { query }) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    return c.json(await analyticsReport(c.env, target.id, query.days));
  });

  defineRoute(app, {
    method: "get", path: "/v1/apps/:id/usage", tag: "apps", auth: "owner",
    summary: "The app's rows and bytes against the per-app limits, and its flows (emails, push, webhook and ingest deliveries, agent tasks) over the last days UTC days (default 30, at most 90): totals, the daily series and month-to-date, from the same counters as /v1/self/usage",
    query: days(90, 30),
    responses: { 200: { description: "The app's usage", schema: usageView }, ...errors(400, 401, 404), ...soft },
  }, async (c, { query }) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    return c.json(await appUsage(c.env, config(c.env), target, query.days));
  });

  defineRoute(app, {
    method: "get", path: "/v1/apps/:id/screenshot", tag: "apps", auth: "owner",
    summary: `A preview picture of the app as PNG: size card (${SCREENSHOT_SIZES.card.width}×${SCREENSHOT_SIZES.card.height}, default) or og (${SCREENSHOT_SIZES.og.width}×${SCREENSHOT_SIZES.og.height}); a rendering of the live page when the operator configured a browser binding, otherwise (and for link apps, or when rendering fails) the relay's brand card with the app's name and colours; cached per live version (ETag; X-Screenshot-Cache says hit or miss, X-Screenshot-Kind render or card)`,
    query: z.strictObject({ size: z.enum(["card", "og"]).default("card") }),
    responses: {
      200: { description: "The PNG", contentType: "image/png" },
      304: { description: "Not modified (If-None-Match)" },
      ...errors(400, 401, 404, 409), ...soft,
    },
  }, async (c, { query }) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    if (target.currentVersion === null) throw new RelayError("conflict", "The app has no live version to picture yet; deploy one first.", { app_id: target.id });
    const size: ScreenshotSize = query.size;
    const shot = await screenshot(c.env, target, size);
    const headers = { ETag: shot.etag, "Cache-Control": "private, max-age=300", "X-Screenshot-Cache": shot.cached ? "hit" : "miss", "X-Screenshot-Kind": shot.kind, "X-Content-Type-Options": "nosniff" };
    if (c.req.header("if-none-match") === shot.etag) return new Response(null, { status: 304, headers });
    return new Response(shot.bytes, { status: 200, headers: { ...headers, "Content-Type": "image/png" } });
  });
}
