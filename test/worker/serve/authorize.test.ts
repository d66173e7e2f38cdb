// The sign-in hand-off between the API origin and an app origin: /authorize (signed-out
// redirect to sign-in, one-time grant for the owner, return URL confined to the app's
// own origin, 403 for a person without access, public apps just go back) and
// /_svc/session (GET: who is looking; POST: trade a grant once for an app session).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectError, json } from "../helpers";
import { appCall, deploy, grantFor, manifest, owner, ownerToken, shareToken, type SessionAnswer } from "./helpers";

function appRoot(slug: string): string {
  return `http://${slug}.localhost:8787/`;
}

describe("/authorize", () => {
  it("sends a signed-out person to sign in and back to the same URL", async () => {
    const app = await deploy(await owner(), { visibility: "private" });
    const path = `/authorize?app=${app.slug}&return=${encodeURIComponent(appRoot(app.slug))}`;
    const res = await call(path);
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe(`/signin?return_to=${encodeURIComponent(path)}`);
    // The sign-in page keeps it as its return_to.
    const signin = await call(res.headers.get("location")!);
    expect(await signin.text()).toContain(`name="return_to" value="${path.replace(/&/g, "&amp;")}"`);
  });

  it("gives the owner a one-time grant in the fragment of the return URL", async () => {
    const who = await owner();
    const app = await deploy(who, { visibility: "private" });
    const back = `${appRoot(app.slug)}index.html?tab=2#old-fragment`;
    const res = await call(`/authorize?app=${app.slug}&return=${encodeURIComponent(back)}`, { session: who.human.session });
    expect(res.status).toBe(302);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("location")).toMatch(new RegExp(`^${appRoot(app.slug).replace(/\./g, "\\.")}index\\.html\\?tab=2#svc_grant=sgr_[0-9a-f]{32}$`));
    const stored = await env.DB.prepare("SELECT app_id, human_id, used_at, expires_at, created_at FROM app_session_grants WHERE app_id = ?1").bind(app.app_id).all();
    expect(stored.results).toHaveLength(1);
    const row = stored.results[0] as { human_id: string; used_at: string | null; expires_at: string; created_at: string };
    expect(row.human_id).toBe(who.human.humanId);
    expect(row.used_at).toBeNull();
    expect(Date.parse(row.expires_at) - Date.parse(row.created_at)).toBe(120_000);
  });

  it("turns any return URL off the app's own origin into the app root", async () => {
    const who = await owner();
    const app = await deploy(who, { visibility: "private" });
    const other = await deploy(who, { visibility: "private" });
    const bad = [
      "https://evil.example/", `http://${other.slug}.localhost:8787/`, "javascript:alert(1)", "/relative/path",
      `http://${app.slug}.localhost:8787.evil.example/`, `https://${app.slug}.localhost:8787/`, `http://user:pw@${app.slug}.localhost:8787/`,
      "http://localhost:8787/", "", "%%%", `http://${app.slug}.localhost:8787\\@evil.example/`,
    ];
    for (const value of bad) {
      const res = await call(`/authorize?app=${app.slug}&return=${encodeURIComponent(value)}`, { session: who.human.session });
      expect(res.status, value).toBe(302);
      expect(res.headers.get("location"), value).toMatch(new RegExp(`^${appRoot(app.slug).replace(/\./g, "\\.")}#svc_grant=sgr_`));
    }
    const none = await call(`/authorize?app=${app.slug}`, { session: who.human.session });
    expect(none.headers.get("location")).toMatch(new RegExp(`^${appRoot(app.slug).replace(/\./g, "\\.")}#svc_grant=`));
  });

  it("refuses a person without access to a private or link app with a 403 page", async () => {
    const app = await deploy(await owner(), { visibility: "private" });
    const link = await deploy(await owner(), { visibility: "link" });
    const stranger = await owner();
    for (const slug of [app.slug, link.slug]) {
      const res = await call(`/authorize?app=${slug}&return=${encodeURIComponent(appRoot(slug))}`, { session: stranger.human.session });
      expect(res.status).toBe(403);
      expect(res.headers.get("content-type")).toMatch(/^text\/html/);
      const text = await res.text();
      expect(text).toContain("no access");
      expect(text).toContain(stranger.human.email);
    }
    expect(await env.DB.prepare("SELECT count(*) AS n FROM app_session_grants WHERE human_id = ?1").bind(stranger.human.humanId).first("n")).toBe(0);
  });

  it("sends a person without access to a public app straight back, and grants its owner", async () => {
    const who = await owner();
    const app = await deploy(who);
    const stranger = await owner();
    const back = `${appRoot(app.slug)}?x=1`;
    const res = await call(`/authorize?app=${app.slug}&return=${encodeURIComponent(back)}`, { session: stranger.human.session });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe(back);
    const mine = await call(`/authorize?app=${app.slug}&return=${encodeURIComponent(back)}`, { session: who.human.session });
    expect(mine.headers.get("location")).toMatch(/#svc_grant=sgr_[0-9a-f]{32}$/);
  });

  it("answers missing, unknown, deleted and suspended apps with pages", async () => {
    const who = await owner();
    const missing = await call("/authorize", { session: who.human.session });
    expect(missing.status).toBe(400);
    expect(missing.headers.get("content-type")).toMatch(/^text\/html/);
    expect((await call("/authorize?app=Bad_Slug!", { session: who.human.session })).status).toBe(400);
    expect((await call("/authorize?app=no-such-app-anywhere", { session: who.human.session })).status).toBe(404);
    const app = await deploy(who, { visibility: "private" });
    await env.DB.prepare("UPDATE apps SET status = 'suspended' WHERE id = ?1").bind(app.app_id).run();
    expect((await call(`/authorize?app=${app.slug}`, { session: who.human.session })).status).toBe(403);
    await env.DB.prepare("UPDATE apps SET status = 'deleted' WHERE id = ?1").bind(app.app_id).run();
    expect((await call(`/authorize?app=${app.slug}`, { session: who.human.session })).status).toBe(404);
  });

  it("other verbs are 405", async () => {
    const res = await call("/authorize?app=x", { method: "POST", body: "", contentType: "application/x-www-form-urlencoded", origin: "http://localhost:8787" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toContain("GET");
  });
});

describe("POST /_svc/session", () => {
  it("trades a grant once for a seven-day app session", async () => {
    const who = await owner();
    const app = await deploy(who, { visibility: "private", manifest: manifest({ name: "Budget", description: "Ours", icon: "💰" }) });
    const grant = await grantFor(who.human, app.slug);
    const res = await appCall(app.slug, "/_svc/session", { json: { grant } });
    const body = await json<SessionAnswer>(res, 200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("set-cookie")).toBeNull();
    expect(Object.keys(body).sort()).toEqual(["expires_at", "session", "token"]);
    expect(body.token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    const ttl = Date.parse(body.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(7 * 86400_000 - 60_000);
    expect(ttl).toBeLessThanOrEqual(7 * 86400_000 + 1000);
    expect(body.session).toEqual({
      kind: "owner", humanId: who.human.humanId, visitorId: null, displayName: who.human.email.split("@")[0],
      app: { slug: app.slug, name: "Budget", description: "Ours", icon: "💰", visibility: "private", collections: [] },
      visitorIdentity: false,
      auth: { authorize_url: `http://localhost:8787/authorize?app=${app.slug}` },
    });
    // Single use.
    await expectError(await appCall(app.slug, "/_svc/session", { json: { grant } }), 401, "grant_invalid");
  });

  it("refuses an expired grant and a grant for another app (without spending it)", async () => {
    const who = await owner();
    const a = await deploy(who, { visibility: "private" });
    const b = await deploy(who, { visibility: "private" });
    const forA = await grantFor(who.human, a.slug);
    await expectError(await appCall(b.slug, "/_svc/session", { json: { grant: forA } }), 401, "grant_invalid");
    expect((await appCall(a.slug, "/_svc/session", { json: { grant: forA } })).status).toBe(200);

    const late = await grantFor(who.human, a.slug);
    await env.DB.prepare("UPDATE app_session_grants SET expires_at = ?1 WHERE used_at IS NULL AND app_id = ?2")
      .bind(new Date(Date.now() - 1000).toISOString(), a.app_id).run();
    await expectError(await appCall(a.slug, "/_svc/session", { json: { grant: late } }), 401, "grant_invalid");
  });

  it("refuses a grant whose human lost access in the meantime", async () => {
    const who = await owner();
    const app = await deploy(who, { visibility: "private" });
    const grant = await grantFor(who.human, app.slug);
    await env.DB.prepare("UPDATE apps SET owner_human_id = 'someone-else' WHERE id = ?1").bind(app.app_id).run();
    await expectError(await appCall(app.slug, "/_svc/session", { json: { grant } }), 403, "forbidden");
  });

  it("validates the body", async () => {
    const app = await deploy(await owner(), { visibility: "private" });
    await expectError(await appCall(app.slug, "/_svc/session", { json: {} }), 400, "invalid_request");
    await expectError(await appCall(app.slug, "/_svc/session", { json: { grant: 5 } }), 400, "invalid_request");
    await expectError(await appCall(app.slug, "/_svc/session", { json: { grant: "sgr_x", extra: 1 } }), 400, "invalid_request");
    await expectError(await appCall(app.slug, "/_svc/session", { body: "{nope", headers: { "content-type": "application/json" } }), 400, "invalid_request");
    await expectError(await appCall(app.slug, "/_svc/session", { method: "POST" }), 400, "invalid_request");
    await expectError(await appCall(app.slug, "/_svc/session", { json: { grant: "x".repeat(10_000) } }), 413, "payload_too_large");
    await expectError(await appCall(app.slug, "/_svc/session", { json: { grant: "sgr_" + "0".repeat(32) } }), 401, "grant_invalid");
    await expectError(await appCall(app.slug, "/_svc/session", { json: { grant: "garbage" } }), 401, "grant_invalid");
  });

  it("wrong verbs are 405 envelopes", async () => {
    const app = await deploy(await owner());
    const e = await expectError(await appCall(app.slug, "/_svc/session", { method: "DELETE" }), 405, "method_not_allowed");
    expect(e.details).toMatchObject({ method: "DELETE" });
  });
});

describe("GET /_svc/session", () => {
  it("an anonymous caller on a public or link app is 200 anonymous, on a private app 401", async () => {
    const who = await owner();
    const open = await deploy(who, { manifest: manifest({ name: "Open", icon: "🎲" }) });
    const res = await appCall(open.slug, "/_svc/session");
    expect(await json(res, 200)).toEqual({
      kind: "anonymous", humanId: null, visitorId: null, displayName: null,
      app: { slug: open.slug, name: "Open", description: null, icon: "🎲", visibility: "public", collections: [] },
      visitorIdentity: false,
      auth: { authorize_url: `http://localhost:8787/authorize?app=${open.slug}` },
    });
    expect(res.headers.get("cache-control")).toBe("no-store");

    const link = await deploy(who, { visibility: "link" });
    expect(await json(await appCall(link.slug, "/_svc/session"), 200)).toMatchObject({ kind: "anonymous", app: { visibility: "link" } });
    expect(await json(await appCall(link.slug, "/_svc/session", { share: shareToken(link) }), 200)).toMatchObject({ kind: "anonymous" });

    const gated = await deploy(who, { visibility: "private" });
    const e = await expectError(await appCall(gated.slug, "/_svc/session"), 401, "unauthorized");
    expect(e.details).toEqual({ authorize_url: `http://localhost:8787/authorize?app=${gated.slug}` });
  });

  it("the owner's app session reads as the owner on every visibility", async () => {
    const who = await owner();
    for (const visibility of ["public", "link", "private"]) {
      const app = await deploy(who, { visibility });
      const token = await ownerToken(who.human, app.slug);
      expect(await json(await appCall(app.slug, "/_svc/session", { token }), 200)).toMatchObject({
        kind: "owner", humanId: who.human.humanId, displayName: who.human.email.split("@")[0], app: { visibility },
      });
    }
  });

  it("a stale or foreign token is 401 even on a public app, so the page can forget it", async () => {
    const who = await owner();
    const a = await deploy(who);
    const b = await deploy(who);
    const tokenA = await ownerToken(who.human, a.slug);
    await expectError(await appCall(b.slug, "/_svc/session", { token: tokenA }), 401, "unauthorized");
    await expectError(await appCall(b.slug, "/_svc/session", { token: "junk" }), 401, "unauthorized");
    await expectError(await appCall(b.slug, "/_svc/session", { headers: { authorization: "Token abc" } }), 401, "unauthorized");
  });
});
