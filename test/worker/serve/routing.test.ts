// Host routing: the API origin answers the API and the console; an app origin
// (`<slug>.localhost:8787`, host read from the URL) answers only its app — never the
// console, never the API — and refuses unknown, deleted, purged and suspended apps.
// App origins set no cookie and ignore the ones they receive.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectError, json } from "../helpers";
import { appCall, deploy, owner, PAGE } from "./helpers";

describe("host routing", () => {
  it("the API origin still answers the API and the console", async () => {
    const status = await call("/v1/auth/status");
    expect(status.status).toBe(200);
    expect(await status.json()).toHaveProperty("magic_link");
    const signin = await call("/signin");
    expect(signin.status).toBe(200);
    expect(await signin.text()).toContain("Email me a sign-in link");
  });

  it("an app host serves the app, not the API or the console", async () => {
    const app = await deploy(await owner());
    const page = await appCall(app.slug, "/");
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Secret page body");
    for (const path of ["/signin", "/device", "/authorize?app=x", "/v1/auth/status", "/docs/errors", "/__dev/mail", "/console/claim-codes", "/skills/service/SKILL.md"]) {
      const res = await appCall(app.slug, path);
      const text = await res.text();
      expect(res.status, path).toBe(404);
      expect(res.headers.get("content-type"), path).toMatch(/^text\/html/);
      expect(text, path).not.toContain("Email me a sign-in link");
      expect(text, path).not.toContain("magic_link");
      expect(text, path).not.toMatch(/<script/i);
    }
  });

  it("an unknown slug is a plain 404 page, and an envelope under /_svc/", async () => {
    const res = await appCall("no-such-app-here", "/");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await res.text()).toContain("There is no app at this address.");
    await expectError(await appCall("no-such-app-here", "/_svc/session"), 404, "app_not_found");
  });

  it("a deleted app is 404 until restored, and a purged one stays 404", async () => {
    const who = await owner();
    const app = await deploy(who);
    await json(await call(`/v1/apps/${app.app_id}`, { method: "DELETE", key: who.agent.api_key }), 200);
    const gone = await appCall(app.slug, "/");
    expect(gone.status).toBe(404);
    expect(await gone.text()).not.toContain("Secret page body");
    expect((await appCall(app.slug, "/pic.png")).status).toBe(404);
    await expectError(await appCall(app.slug, "/_svc/session"), 404, "app_not_found");

    await json(await call(`/v1/apps/${app.app_id}/restore`, { method: "POST", key: who.agent.api_key }), 200);
    expect((await appCall(app.slug, "/")).status).toBe(200);

    await json(await call(`/v1/apps/${app.app_id}`, { method: "DELETE", key: who.agent.api_key }), 200);
    await json(await call(`/v1/apps/${app.app_id}/purge`, { method: "POST", key: who.agent.api_key, json: {} }), 200);
    const purged = await appCall(app.slug, "/");
    expect(purged.status).toBe(404);
    expect(await purged.text()).toContain("There is no app at this address.");
  });

  it("a suspended app answers a 403 page, and a 403 envelope under /_svc/", async () => {
    const app = await deploy(await owner());
    await env.DB.prepare("UPDATE apps SET status = 'suspended' WHERE id = ?1").bind(app.app_id).run();
    const res = await appCall(app.slug, "/");
    expect(res.status).toBe(403);
    const text = await res.text();
    expect(text).toContain("suspended");
    expect(text).not.toContain("Secret page body");
    expect((await appCall(app.slug, "/pic.png")).status).toBe(403);
    const e = await expectError(await appCall(app.slug, "/_svc/session"), 403, "forbidden");
    expect(e.details).toEqual({ reason: "suspended" });
  });

  it("sets no cookie, and an API session cookie sent to an app origin opens nothing", async () => {
    const who = await owner();
    const app = await deploy(who, { visibility: "private", html: PAGE });
    const res = await appCall(app.slug, "/", { headers: { cookie: `relay_session=${who.human.session}` } });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('id="svc-gate"');
    expect(text).not.toContain("Secret page body");
    expect(res.headers.get("set-cookie")).toBeNull();
    const session = await appCall(app.slug, "/_svc/session", { headers: { cookie: `relay_session=${who.human.session}` } });
    await expectError(session, 401, "unauthorized");
    for (const path of ["/", "/_svc/session", "/robots.txt", "/nope", "/_svc/nope"]) {
      const r = await appCall(app.slug, path, { headers: { cookie: "a=b" } });
      await r.arrayBuffer();
      expect(r.headers.get("set-cookie"), path).toBeNull();
    }
  });
});
