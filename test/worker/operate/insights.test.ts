// Analytics and usage (issue 13 item 7), through the real serving path: each served page
// counts a view in the app's rollup by day, hour, country and referrer host, a visitor
// (same address and browser) counts once a day, the app's own pages as referrer count as
// direct, no address is stored and no cookie is set, and the owner console's app page charts the week; `GET /v1/apps/:id/usage` answers the
// app's own meters and the same flow counters as /v1/self/usage (agent tasks made by the
// real write → outbox → consumer path), narrowed to the app.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, dispatch, expectError, freshIp, json } from "../helpers";
import { deploy, owner } from "../serve/helpers";
import { taskApp, tasksIn, write } from "../tasks/helpers";
import { waitFor } from "../../support/wait";

type Counts = { views: number; uniques: number };
interface Analytics {
  app_id: string; from: string; to: string; totals: Counts;
  days: Array<{ day: string } & Counts>; hours: Array<{ hour: number } & Counts>;
  countries: Array<{ country: string } & Counts>; referrers: Array<{ referrer: string } & Counts>;
}

function visit(slug: string, address: string, headers: Record<string, string> = {}): Promise<Response> {
  return dispatch(new Request(`http://${slug}.localhost:8787/`, { headers: { "cf-connecting-ip": address, "user-agent": "test-browser/1", ...headers } }));
}

describe("analytics", { timeout: 60_000 }, () => {
  it("rolls served pages up by day, hour, country and referrer with daily uniques, storing no address", async () => {
    const who = await owner();
    const app = await deploy(who);
    const key = who.agent.api_key;
    const first = freshIp();
    const second = freshIp();
    const pages = [
      await visit(app.slug, first, { referer: "https://news.example.org/story" }),
      await visit(app.slug, first, { referer: `http://${app.slug}.localhost:8787/` }),
      await visit(app.slug, second),
      await visit(app.slug, second, { "user-agent": "other-browser/2" }),
    ];
    for (const page of pages) {
      expect(page.status).toBe(200);
      expect(page.headers.get("set-cookie")).toBeNull();
      await page.text();
    }
    const report = await waitFor(async () => {
      const answer = await json<Analytics>(await call(`/v1/apps/${app.app_id}/analytics`, { key }), 200);
      return answer.totals.views === 4 ? answer : null;
    }, { timeout: 10_000, message: "four views counted" });
    expect(report.totals).toEqual({ views: 4, uniques: 3 });
    expect(report.days).toHaveLength(7);
    const today = new Date().toISOString().slice(0, 10);
    expect(report.to).toBe(today);
    expect(report.days.at(-1)).toEqual({ day: today, views: 4, uniques: 3 });
    expect(report.days.slice(0, 6).every((d) => d.views === 0)).toBe(true);
    expect(report.hours).toHaveLength(24);
    expect(report.hours.reduce((n, h) => n + h.views, 0)).toBe(4);
    expect(report.referrers).toEqual([{ referrer: "", views: 3, uniques: 2 }, { referrer: "news.example.org", views: 1, uniques: 1 }]);
    expect(report.countries.reduce((n, c) => n + c.views, 0)).toBe(4);
    // What is kept of a visitor is a salted hash, never the address.
    const kept = await env.DB.prepare("SELECT visitor_hash FROM app_visitor_days WHERE app_id = ?").bind(app.app_id).all<{ visitor_hash: string }>();
    expect(kept.results).toHaveLength(3);
    for (const row of kept.results) {
      expect(row.visitor_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(row.visitor_hash).not.toContain(first);
    }
    const week = await json<Analytics>(await call(`/v1/apps/${app.app_id}/analytics?days=1`, { key }), 200);
    expect(week.days).toEqual([{ day: today, views: 4, uniques: 3 }]);
    // The owner console's app page draws the week: seven bars, today's at four views.
    const page = await call(`/console/apps/${app.app_id}`, { session: who.human.session });
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain('id="visits-chart"');
    expect(html).toContain("4 page views, 3 unique visitors");
    expect([...html.matchAll(/<g data-day="([\d-]+)" data-views="(\d+)">/g)].map((m) => [m[1], m[2]])).toEqual(report.days.map((d) => [d.day, String(d.views)]));
  });

  it("refuses bad windows and other owners", async () => {
    const who = await owner();
    const app = await deploy(who);
    for (const query of ["days=0", "days=91", "days=two", "since=1"]) {
      await expectError(await call(`/v1/apps/${app.app_id}/analytics?${query}`, { key: who.agent.api_key }), 400, "invalid_request");
    }
    const stranger = await owner();
    await expectError(await call(`/v1/apps/${app.app_id}/analytics`, { key: stranger.agent.api_key }), 404, "app_not_found");
    await expectError(await call(`/v1/apps/${app.app_id}/usage`, { key: stranger.agent.api_key }), 404, "app_not_found");
  });
});

interface Usage {
  app_id: string; meters: { rows: { used: number; limit: number }; storage_bytes: { used: number; limit: number } };
  totals: Record<string, number>; granularity: string; points: Array<{ start: string; flows: Record<string, number> }>;
  month_to_date: { start: string; flows: Record<string, number> };
}

describe("usage", { timeout: 60_000 }, () => {
  it("answers the app's meters, flow totals and daily series, apart from the owner's other apps", async () => {
    const t = await taskApp();
    const other = await taskApp(undefined, t.human);
    await write(t, "issues", { title: "one" }, "one");
    await write(t, "issues", { title: "two" }, "two");
    await write(other, "issues", { title: "elsewhere" }, "elsewhere");
    await tasksIn(t, "queued", 2);
    await tasksIn(other, "queued", 1);
    const usage = await json<Usage>(await call(`/v1/apps/${t.appId}/usage?days=3`, { key: t.key }), 200);
    expect(usage.app_id).toBe(t.appId);
    expect(usage.meters.rows.used).toBe(2);
    expect(usage.meters.storage_bytes.used).toBeGreaterThan(0);
    expect(usage.totals.agent_tasks).toBe(2);
    expect(usage.totals.emails).toBe(0);
    expect(usage.granularity).toBe("day");
    expect(usage.points).toHaveLength(3);
    expect(usage.points.at(-1)!.flows.agent_tasks).toBe(2);
    expect(usage.month_to_date.flows.agent_tasks).toBe(2);
    // The account's series counts both apps from the same counters.
    const account = await json<{ month_to_date: { flows: Record<string, number> } }>(await call("/v1/self/usage/series?days=1", { session: t.human.session }), 200);
    expect(account.month_to_date.flows.agent_tasks).toBe(3);
    await expectError(await call(`/v1/apps/${t.appId}/usage?days=0`, { key: t.key }), 400, "invalid_request");
  });
});
