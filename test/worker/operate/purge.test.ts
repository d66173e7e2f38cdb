// Purging an app frees its operating surface: its custom domain can be bound by another
// app, and its migration spans, unrestricted flag, page-view rollups, visitor hashes and
// cached screenshot cards are gone from D1 and R2.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, dispatch, freshIp, json } from "../helpers";
import { deploy, owner } from "../serve/helpers";
import { waitFor } from "../../support/wait";

async function rowsOf(table: string, appId: string): Promise<number> {
  return (await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE app_id = ?`).bind(appId).first<{ n: number }>())!.n;
}

describe("purge and the operating surface", { timeout: 60_000 }, () => {
  it("removes domains, spans, flags, rollups and cached cards", async () => {
    const who = await owner();
    const app = await deploy(who, { visibility: "private" });
    const key = who.agent.api_key;
    const domain = `gone-${crypto.randomUUID().slice(0, 8)}.example.org`;
    await json(await call(`/v1/apps/${app.app_id}/domain`, { key, json: { domain } }), 201);
    await json(await call(`/v1/apps/${app.app_id}/migration-mode`, { key, json: { enabled: true } }), 200);
    await json(await call(`/v1/apps/${app.app_id}/unrestricted`, { session: who.human.session, json: { enabled: true } }), 200);
    expect((await call(`/v1/apps/${app.app_id}/screenshot`, { key })).status).toBe(200);
    await env.DB.prepare("INSERT INTO app_page_views (app_id, day, hour, country, referrer, views, uniques) VALUES (?, '2026-11-26', 8, '', '', 1, 1)").bind(app.app_id).run();
    expect((await env.BLOBS.list({ prefix: `screenshots/${app.app_id}/` })).objects).toHaveLength(1);

    await json(await call(`/v1/apps/${app.app_id}`, { key, method: "DELETE" }), 200);
    await json(await call(`/v1/apps/${app.app_id}/purge`, { key, json: {} }), 200);
    for (const table of ["app_domains", "app_migration_spans", "app_unrestricted", "app_page_views", "app_visitor_days"]) expect(await rowsOf(table, app.app_id), table).toBe(0);
    expect((await env.BLOBS.list({ prefix: `screenshots/${app.app_id}/` })).objects).toHaveLength(0);

    const next = await deploy(who);
    await json(await call(`/v1/apps/${next.app_id}/domain`, { key, json: { domain } }), 201);
    const page = await waitFor(async () => {
      const res = await dispatch(new Request(`http://${domain}/`, { headers: { "cf-connecting-ip": freshIp() } }));
      return res.status === 200 ? res : null;
    });
    await page.text();
  });
});
