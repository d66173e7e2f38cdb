// The development-only paths of CONTRACT §3: `POST /__dev/cron` runs every sweep now (or
// as if at a given instant) and names them; `GET /__dev/mail` is JSON for programs and a
// readable page with clickable links for a browser. Outside development mode both are the
// same 404 as a path that never existed, and bad input is a catalogue error that sweeps
// nothing.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { TRASH_DAYS } from "../../../src/apps/trash";
import { sweepNames } from "../../../src/sweeps";
import { call, callWith, claimedAgent, count, expectError, freshEmail, json, requestLink, signIn } from "../helpers";

const manifest = {
  "x-service-manifest": { app: { name: "Trash" }, collections: { notes: { read: ["owner"], write: ["owner"], delete: ["owner"] } } },
};
const production = { RELAY_ENV: "production" };
const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

describe("POST /__dev/cron", () => {
  it("runs every sweep now and names them", async () => {
    const human = await signIn();
    await json(await call("/v1/self/claim-codes", { method: "POST", session: human.session }), 201);
    await env.DB.prepare("UPDATE claim_codes SET expires_at = ?1 WHERE human_id = ?2").bind("2000-01-01T00:00:00.000Z", human.humanId).run();
    const { ran } = await json<{ ran: string[] }>(await call("/__dev/cron", { method: "POST" }), 200);
    expect(ran).toEqual(sweepNames());
    expect(ran).toEqual(expect.arrayContaining(["expiries", "trash", "webhooks"]));
    expect(await count("claim_codes", "human_id = ?1", human.humanId)).toBe(0);
  });

  it("{ now } sweeps as if at that instant: a trashed app is purged once its window has passed then, not before", async () => {
    const human = await signIn();
    const { api_key: key } = await claimedAgent(human);
    const app = await json<{ app_id: string }>(await call("/v1/apps", { key, json: { html: "<p>t</p>", manifest } }), 201);
    await json(await call(`/v1/apps/${app.app_id}`, { method: "DELETE", key }), 200);
    const inside = new Date(Date.now() + (TRASH_DAYS - 1) * 86_400_000).toISOString();
    await json(await call("/__dev/cron", { method: "POST", json: { now: inside } }), 200);
    expect(await count("apps", "id = ?1", app.app_id)).toBe(1);
    const past = new Date(Date.now() + (TRASH_DAYS + 1) * 86_400_000).toISOString().replace(/\.\d+Z$/, "+00:00");
    expect(await json(await call("/__dev/cron", { method: "POST", json: { now: past } }), 200)).toEqual({ ran: sweepNames() });
    expect(await count("apps", "id = ?1", app.app_id)).toBe(0);
  });

  it("bad input is invalid_request naming the field, and sweeps nothing", async () => {
    const human = await signIn();
    const { api_key: key } = await claimedAgent(human);
    const app = await json<{ app_id: string }>(await call("/v1/apps", { key, json: { html: "<p>t</p>", manifest } }), 201);
    await json(await call(`/v1/apps/${app.app_id}`, { method: "DELETE", key }), 200);
    const far = new Date(Date.now() + (TRASH_DAYS + 5) * 86_400_000);
    const cases: Array<[unknown, string]> = [
      [{ now: "tomorrow" }, "now"],
      [{ now: far.getTime() }, "now"],
      [{ now: far.toISOString().slice(0, 10) }, "now"],
      [{ now: "2026-02-30T08:00:00Z" }, "now"],
      [{ now: far.toISOString(), extra: 1 }, "extra"],
      [[far.toISOString()], "body"],
      ["now", "body"],
    ];
    for (const [body, field] of cases) {
      const err = await expectError(await call("/__dev/cron", { method: "POST", json: body }), 400, "invalid_request");
      expect({ body, field: err.details?.field }).toEqual({ body, field });
    }
    await expectError(await call("/__dev/cron", { method: "POST", body: "{", contentType: "application/json" }), 400, "invalid_request");
    expect(await count("apps", "id = ?1", app.app_id)).toBe(1);
  });

  it("outside development mode: 404 not_found, nothing swept", async () => {
    const human = await signIn();
    await json(await call("/v1/self/claim-codes", { method: "POST", session: human.session }), 201);
    await env.DB.prepare("UPDATE claim_codes SET expires_at = ?1 WHERE human_id = ?2").bind("2000-01-01T00:00:00.000Z", human.humanId).run();
    await expectError(await callWith(production, "/__dev/cron", { method: "POST" }), 404, "not_found");
    expect(await count("claim_codes", "human_id = ?1", human.humanId)).toBe(1);
  });
});

describe("GET /__dev/mail", () => {
  it("a browser gets a page: newest first, links clickable, filterable by recipient; markup in a mail is text", async () => {
    const email = freshEmail();
    const link = await requestLink(email);
    await env.DB.prepare(`INSERT INTO dev_mail (id, "to", subject, text, html, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)`)
      .bind(crypto.randomUUID(), email, "<b>later</b>", "See <script>alert(1)</script> https://example.com/x.", "<p>x</p>", new Date(Date.now() + 60_000).toISOString()).run();
    const res = await call(`/__dev/mail?to=${encodeURIComponent(email)}`, { headers: { accept: BROWSER_ACCEPT } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("vary")?.toLowerCase()).toContain("accept");
    const page = await res.text();
    expect(page.startsWith("<!doctype html>")).toBe(true);
    expect(page).toContain(`<a href="${link.replaceAll("&", "&amp;")}">`);
    expect(page).toContain(`<a href="https://example.com/x">https://example.com/x</a>.`);
    expect(page).not.toContain("<script>alert");
    expect(page).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(page).toContain("&lt;b&gt;later&lt;/b&gt;");
    expect(page.indexOf("&lt;b&gt;later")).toBeLessThan(page.indexOf("Your sign-in link"));
    expect(page.indexOf("Your sign-in link")).toBeGreaterThan(0);
    expect(page).toContain(`value="${email}"`);
    const empty = await (await call(`/__dev/mail?to=${encodeURIComponent(freshEmail())}`, { headers: { accept: "text/html" } })).text();
    expect(empty).toContain(`id="empty"`);
  });

  it("programs get the JSON of CONTRACT §3 (no Accept, */*, application/json, or JSON preferred)", async () => {
    const email = freshEmail();
    await requestLink(email);
    for (const accept of [undefined, "*/*", "application/json", "application/json, text/html;q=0.5", "text/html;q=0"]) {
      const res = await call(`/__dev/mail?to=${encodeURIComponent(email)}`, { headers: accept ? { accept } : {} });
      const body = await json<{ messages: Array<Record<string, unknown>> }>(res, 200);
      expect(Object.keys(body.messages[0]).sort()).toEqual(["created_at", "html", "id", "subject", "text", "to"]);
    }
  });

  it("outside development mode: 404 for a browser too", async () => {
    await expectError(await callWith(production, "/__dev/mail", { headers: { accept: BROWSER_ACCEPT } }), 404, "not_found");
  });
});
