// Preview tokens and test-session tokens. A preview token opens a PRIVATE app to an
// anonymous viewer through the gate (document, assets, /_svc/session, data paths) with
// exactly what the manifest grants `anyone`; expired, revoked, forged, other-app and
// link-app presentations are refused with 401 and open nothing; a transfer revokes them.
// A test-session token is a one-time grant a headless client trades for an OWNER app
// session; spent, expired, other-app and forged ones answer 401 grant_invalid.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, callWith, expectError, json, signIn } from "../helpers";
import { appCall, appCallWith, ASSETS, deploy } from "../serve/helpers";
import { accept, accountManifest, member, offer, setup, state, type Setup } from "./fixtures";

type Obj = Record<string, unknown>;

const SECRET_BODY = "Secret page body";

interface Minted {
  id: string;
  token: string;
  preview_url: string;
  label: string | null;
  status: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
}

async function mint(s: Setup, body: Obj = {}): Promise<Minted> {
  return json<Minted>(await call(`${s.path}/preview-tokens`, { key: s.key, json: body }), 201);
}

async function opens(slug: string, share: string): Promise<boolean> {
  const res = await appCall(slug, "/", { share });
  const text = await res.text();
  if (res.status === 200) {
    expect(text).toContain(SECRET_BODY);
    return true;
  }
  expect(res.status).toBe(401);
  expect(JSON.parse(text).error.code).toBe("unauthorized");
  expect(text).not.toContain(SECRET_BODY);
  return false;
}

describe("preview tokens: minting, listing, revoking", () => {
  it("201 with the token (shown once) and preview_url; the list shows status, never the token", async () => {
    const s = await setup();
    const minted = await mint(s, { label: "  For the client ", ttl_seconds: 3600 });
    expect(Object.keys(minted).sort()).toEqual(["created_at", "expires_at", "id", "label", "preview_url", "revoked_at", "status", "token"]);
    expect(minted.token).toMatch(/^prv_[0-9a-f]{32}$/);
    expect(minted.preview_url).toBe(`${s.app.url}#k=${minted.token}`);
    expect(minted).toMatchObject({ label: "For the client", status: "active", revoked_at: null });
    expect(Date.parse(minted.expires_at) - Date.now()).toBeLessThanOrEqual(3_600_000);
    expect(Date.parse(minted.expires_at) - Date.now()).toBeGreaterThan(3_500_000);
    const defaults = await mint(s);
    expect(defaults.label).toBeNull();
    expect(Date.parse(defaults.expires_at) - Date.now()).toBeGreaterThan(7 * 86_400_000 - 60_000);
    const clamped = await mint(s, { ttl_seconds: 10 ** 9 });
    expect(Date.parse(clamped.expires_at) - Date.now()).toBeLessThanOrEqual(30 * 86_400_000);
    const list = await json<{ items: Obj[]; next_cursor: null }>(await call(`${s.path}/preview-tokens`, { session: s.who.human.session }), 200);
    expect(list.items.map((i) => i.id)).toEqual([clamped.id, defaults.id, minted.id]);
    expect(JSON.stringify(list)).not.toContain(minted.token);
    expect(JSON.stringify((await env.DB.prepare("SELECT * FROM preview_tokens").all()).results)).not.toContain(minted.token.slice(4));
  });

  it("refusals: public and link apps 409, bad bodies 400, other owners 404, members 404, deleted apps 410 — nothing minted", async () => {
    const s = await setup();
    const pub = await setup("public");
    const link = await setup("link");
    const stranger = await setup();
    const friend = await member(s);
    for (const other of [pub, link]) {
      const err = await expectError(await call(`${other.path}/preview-tokens`, { key: other.key, json: {} }), 409, "conflict");
      expect(err.details?.visibility).toBe(other.app.visibility);
    }
    for (const body of [{ ttl_seconds: 59 }, { ttl_seconds: 1.5 }, { label: "x".repeat(101) }, { label: "a\u0007" }, { other: 1 }]) {
      await expectError(await call(`${s.path}/preview-tokens`, { key: s.key, json: body }), 400, "invalid_request");
    }
    await expectError(await call(`${s.path}/preview-tokens`, { key: stranger.key, json: {} }), 404, "app_not_found");
    await expectError(await call(`${s.path}/preview-tokens`, { key: stranger.key }), 404, "app_not_found");
    await expectError(await call(`${s.path}/preview-tokens`, { session: friend.session, json: {} }), 404, "app_not_found");
    expect((await state(s.app.app_id)).previews).toEqual([]);
    await json(await call(s.path, { method: "DELETE", key: s.key }), 200);
    await expectError(await call(`${s.path}/preview-tokens`, { key: s.key, json: {} }), 410, "soft_deleted");
    expect(await env.DB.prepare("SELECT count(*) AS n FROM preview_tokens WHERE app_id IN (?1, ?2, ?3)").bind(s.app.app_id, pub.app.app_id, link.app.app_id).first("n")).toBe(0);
  });

  it("DELETE revokes (204, idempotent); an unknown id or another app's token is 404 and revokes nothing", async () => {
    const s = await setup();
    const other = await setup();
    const mine = await mint(s);
    const theirs = await mint(other);
    await expectError(await call(`${s.path}/preview-tokens/${theirs.id}`, { method: "DELETE", key: s.key }), 404, "not_found");
    await expectError(await call(`${s.path}/preview-tokens/pv_nope`, { method: "DELETE", key: s.key }), 404, "not_found");
    await expectError(await call(`${other.path}/preview-tokens/${theirs.id}`, { method: "DELETE", key: s.key }), 404, "app_not_found");
    expect(await opens(other.app.slug, theirs.token)).toBe(true);
    expect((await call(`${s.path}/preview-tokens/${mine.id}`, { method: "DELETE", key: s.key })).status).toBe(204);
    expect((await call(`${s.path}/preview-tokens/${mine.id}`, { method: "DELETE", session: s.who.human.session })).status).toBe(204);
    const list = await json<{ items: Obj[] }>(await call(`${s.path}/preview-tokens`, { key: s.key }), 200);
    expect(list.items[0]).toMatchObject({ id: mine.id, status: "revoked" });
    expect(list.items[0].revoked_at).not.toBeNull();
  });
});

describe("preview tokens at the gate", () => {
  it("open the document, assets, /_svc/session and anyone-readable data as an anonymous viewer — nothing more", async () => {
    const who = (await setup()).who;
    const app = await deploy(who, { visibility: "private", manifest: accountManifest(), assets: ASSETS });
    const s: Setup = { who, app, path: `/v1/apps/${app.app_id}`, key: who.agent.api_key };
    await json(await call(`${s.path}/collections/open`, { key: s.key, json: { data: { n: 1 } } }), 201);
    await json(await call(`${s.path}/collections/secret`, { key: s.key, json: { data: { n: 2 } } }), 201);
    const { token } = await mint(s);

    // The plain request still gets the gate shell; the credential in the header opens the document.
    expect(await (await appCall(app.slug, "/")).text()).not.toContain(SECRET_BODY);
    expect(await opens(app.slug, token)).toBe(true);
    expect((await appCall(app.slug, "/pic.png", { share: token })).status).toBe(200);
    expect((await appCall(app.slug, "/pic.png")).status).toBe(401);

    const session = await json<Obj>(await appCall(app.slug, "/_svc/session", { share: token }), 200);
    expect(session).toMatchObject({ kind: "anonymous", humanId: null });
    const rows = await json<{ rows: Array<{ data: Obj }> }>(await appCall(app.slug, "/_svc/c/open", { share: token }), 200);
    expect(rows.rows.map((r) => r.data)).toEqual([{ n: 1 }]);
    await expectError(await appCall(app.slug, "/_svc/c/secret", { share: token }), 403, "collection_read_forbidden");
    await expectError(await appCall(app.slug, "/_svc/c/open", { share: token, json: { data: { n: 3 } } }), 403, "collection_write_forbidden");
    // Without it, the private app stays closed.
    await expectError(await appCall(app.slug, "/_svc/session"), 401, "unauthorized");
    await expectError(await appCall(app.slug, "/_svc/c/open"), 401, "unauthorized");
  });

  it("revoked, expired, forged, another app's, and on a link app → 401 everywhere, opening nothing", async () => {
    const s = await setup();
    const other = await setup();
    const link = await setup("link");
    const revoked = await mint(s);
    const expired = await mint(s);
    const live = await mint(s);
    const foreign = await mint(other);
    expect((await call(`${s.path}/preview-tokens/${revoked.id}`, { method: "DELETE", key: s.key })).status).toBe(204);
    await env.DB.prepare("UPDATE preview_tokens SET expires_at = ?1 WHERE id = ?2").bind(new Date(Date.now() - 1000).toISOString(), expired.id).run();
    const forged = ["prv_" + "0".repeat(32), live.token.slice(0, -1) + (live.token.endsWith("0") ? "1" : "0")];
    for (const bad of [revoked.token, expired.token, foreign.token, ...forged]) {
      expect(await opens(s.app.slug, bad)).toBe(false);
      await expectError(await appCall(s.app.slug, "/_svc/session", { share: bad }), 401, "unauthorized");
      await expectError(await appCall(s.app.slug, "/_svc/c/open", { share: bad }), 401, "unauthorized");
    }
    expect(await opens(link.app.slug, live.token)).toBe(false);
    // The live one still works, and the list says which is which.
    expect(await opens(s.app.slug, live.token)).toBe(true);
    const statuses = Object.fromEntries((await json<{ items: Obj[] }>(await call(`${s.path}/preview-tokens`, { key: s.key }), 200)).items.map((i) => [i.id, i.status]));
    expect(statuses).toEqual({ [revoked.id]: "revoked", [expired.id]: "expired", [live.id]: "active" });
  });

  it("an app turned link stops honouring them (private again: they work again); a transfer revokes them", async () => {
    const s = await setup();
    const { token } = await mint(s);
    await json(await call(s.path, { method: "PATCH", key: s.key, json: { visibility: "link" } }), 200);
    expect(await opens(s.app.slug, token)).toBe(false);
    await json(await call(s.path, { method: "PATCH", key: s.key, json: { visibility: "private" } }), 200);
    expect(await opens(s.app.slug, token)).toBe(true);
    const recipient = await signIn();
    const handed = await offer(s, recipient.email);
    await json(await accept(recipient, handed.token), 200);
    expect(await opens(s.app.slug, token)).toBe(false);
  });
});

interface TestSession {
  token: string;
  expires_at: string;
  app_id: string;
  session_url: string;
  open_url: string;
}

async function testSession(s: Setup): Promise<TestSession> {
  return json<TestSession>(await call(`${s.path}/test-session-tokens`, { key: s.key, json: {} }), 201);
}

function redeem(slug: string, grant: string): Promise<Response> {
  return appCall(slug, "/_svc/session", { json: { grant } });
}

describe("test-session tokens", () => {
  it("201 with the token, its exchange URL and an open URL; redeemed once for an OWNER app session that opens the app", async () => {
    const s = await setup();
    const minted = await testSession(s);
    expect(Object.keys(minted).sort()).toEqual(["app_id", "expires_at", "open_url", "session_url", "token"]);
    expect(minted.token).toMatch(/^sgr_[0-9a-f]{32}$/);
    expect(minted).toMatchObject({ app_id: s.app.app_id, session_url: `http://${s.app.slug}.localhost:8787/_svc/session`, open_url: `${s.app.url}#svc_grant=${minted.token}` });
    const ttl = Date.parse(minted.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(590_000);
    expect(ttl).toBeLessThanOrEqual(600_000);

    const answer = await json<{ token: string; session: Obj }>(await redeem(s.app.slug, minted.token), 200);
    expect(answer.session).toMatchObject({ kind: "owner", humanId: s.who.human.humanId });
    const page = await appCall(s.app.slug, "/", { token: answer.token });
    expect(await page.text()).toContain(SECRET_BODY);
    expect((await json<{ rows: unknown[] }>(await appCall(s.app.slug, "/_svc/c/secret", { token: answer.token }), 200)).rows).toEqual([]);
    // Spent.
    await expectError(await redeem(s.app.slug, minted.token), 401, "grant_invalid");
    // The owner's session may mint one too.
    expect((await json<TestSession>(await call(`${s.path}/test-session-tokens`, { method: "POST", session: s.who.human.session }), 201)).token).toMatch(/^sgr_/);
  });

  it("another app's, expired and forged tokens → 401 grant_invalid; a token shown to the wrong app is not spent", async () => {
    const s = await setup();
    const other = await setup();
    const minted = await testSession(s);
    await expectError(await redeem(other.app.slug, minted.token), 401, "grant_invalid");
    const expired = await testSession(s);
    const hash = [...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(expired.token)))].map((b) => b.toString(16).padStart(2, "0")).join("");
    await env.DB.prepare("UPDATE app_session_grants SET expires_at = ?1 WHERE grant_hash = ?2").bind(new Date(Date.now() - 1000).toISOString(), hash).run();
    await expectError(await redeem(s.app.slug, expired.token), 401, "grant_invalid");
    for (const forged of ["sgr_" + "0".repeat(32), minted.token.slice(0, -1) + (minted.token.endsWith("0") ? "1" : "0"), "prv_" + minted.token.slice(4)]) {
      await expectError(await redeem(s.app.slug, forged), 401, "grant_invalid");
    }
    expect((await json<{ session: Obj }>(await redeem(s.app.slug, minted.token), 200)).session.kind).toBe("owner");
  });

  it("minting refusals: other owners and members 404, deleted 410, a relay without APP_SESSION_SECRET 503 — nothing stored", async () => {
    const s = await setup();
    const stranger = await setup();
    const friend = await member(s);
    const before = await state(s.app.app_id);
    await expectError(await call(`${s.path}/test-session-tokens`, { key: stranger.key, json: {} }), 404, "app_not_found");
    await expectError(await call(`${s.path}/test-session-tokens`, { method: "POST", session: friend.session }), 404, "app_not_found");
    await expectError(await call(`${s.path}/test-session-tokens`, { key: s.key, json: { ttl: 5 } }), 400, "invalid_request");
    const err = await expectError(await callWith({ RELAY_ENV: "production" }, `${s.path}/test-session-tokens`, { key: s.key, json: {} }), 503, "auth_provider_unavailable");
    expect(err.details?.reason).toBe("app_session_secret_missing");
    expect(await state(s.app.app_id)).toEqual(before);
    await json(await call(s.path, { method: "DELETE", key: s.key }), 200);
    await expectError(await call(`${s.path}/test-session-tokens`, { key: s.key, json: {} }), 410, "soft_deleted");
    expect(await state(s.app.app_id)).toMatchObject({ grants: before.grants });
  });

  it("a token minted before a transfer opens nothing afterwards", async () => {
    const s = await setup();
    const minted = await testSession(s);
    const recipient = await signIn();
    const handed = await offer(s, recipient.email, false);
    await json(await accept(recipient, handed.token), 200);
    await expectError(await redeem(s.app.slug, minted.token), 401, "grant_invalid");
    // In production the exchange itself needs the secret too.
    const fresh = await json<TestSession>(await call(`${s.path}/test-session-tokens`, { session: recipient.session, method: "POST" }), 201);
    const res = await appCallWith({ RELAY_ENV: "production" }, s.app.slug, "/_svc/session", { json: { grant: fresh.token } });
    expect(res.status).toBe(503);
  });
});
