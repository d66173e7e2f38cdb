// The rest of /v1/self: marketing consent, the one-time signup answer, the VAPID public
// key (generated once and kept in D1 in development; from VAPID_PRIVATE_KEY otherwise,
// as a bare scalar or a JWK; 501 without a usable one), push subscriptions (save,
// update, move between accounts, delete, cap), and usage meters and flow series counted
// from real apps, rows and recorded flows.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { API, call, callWith, expectError, json, signIn, type SignedIn } from "../helpers";
import { recordFlow } from "../../../src/account/usage";
import { MAX_PUSH_SUBSCRIPTIONS } from "../../../src/account/push";
import { anotherApp, setup } from "./fixtures";
import { clockPast } from "../../support/wait";

type Obj = Record<string, unknown>;

function b64url(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromB64url(s: string): Uint8Array {
  const std = s.replace(/-/g, "+").replace(/_/g, "/");
  return Uint8Array.from(atob(std + "=".repeat((4 - (std.length % 4)) % 4)), (c) => c.charCodeAt(0));
}

async function browserKeys(): Promise<{ p256dh: string; auth: string }> {
  const pair = await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"]) as CryptoKeyPair;
  const raw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey) as ArrayBuffer);
  return { p256dh: b64url(raw), auth: b64url(crypto.getRandomValues(new Uint8Array(16))) };
}

let endpointCounter = 0;
function endpoint(): string {
  endpointCounter += 1;
  return `https://push.example.com/send/${crypto.randomUUID()}-${endpointCounter}`;
}

function subscribe(human: SignedIn, body: unknown): Promise<Response> {
  return call("/v1/self/push-subscriptions", { session: human.session, json: body });
}

async function subscriptions(humanId?: string) {
  const sql = humanId ? "SELECT endpoint, human_id, p256dh, auth FROM push_subscriptions WHERE human_id = ?1 ORDER BY endpoint" : "SELECT endpoint, human_id FROM push_subscriptions ORDER BY endpoint";
  return (await (humanId ? env.DB.prepare(sql).bind(humanId) : env.DB.prepare(sql)).all()).results;
}

describe("PUT /v1/self/marketing-consent", () => {
  it("turns product mail on and off and answers the profile; bad bodies 400, cross-site 403, signed out 401 — unchanged", async () => {
    const me = await signIn();
    const on = await json<Obj>(await call("/v1/self/marketing-consent", { method: "PUT", session: me.session, json: { marketing_consent: true } }), 200);
    expect(on).toEqual({ id: me.humanId, email: me.email, name: null, display_name: me.email.split("@")[0], marketing_consent: true });
    expect((await json<Obj>(await call("/v1/self/profile", { session: me.session }), 200)).marketing_consent).toBe(true);
    for (const body of [{}, { marketing_consent: "yes" }, { marketing_consent: null }, { marketing_consent: true, name: "x" }]) {
      await expectError(await call("/v1/self/marketing-consent", { method: "PUT", session: me.session, json: body }), 400, "invalid_request");
    }
    await expectError(await call("/v1/self/marketing-consent", { method: "PUT", session: me.session, origin: "https://evil.example", json: { marketing_consent: false } }), 403, "csrf_origin_mismatch");
    await expectError(await call("/v1/self/marketing-consent", { method: "PUT", origin: API, json: { marketing_consent: false } }), 401, "unauthorized");
    expect(await env.DB.prepare("SELECT marketing_consent FROM humans WHERE id = ?1").bind(me.humanId).first("marketing_consent")).toBe(1);
    const off = await json<Obj>(await call("/v1/self/marketing-consent", { method: "PUT", session: me.session, json: { marketing_consent: false } }), 200);
    expect(off.marketing_consent).toBe(false);
  });
});

describe("POST /v1/self/signup-source", () => {
  it("records the answer once (201); a second answer → 409 with the first; bad bodies 400", async () => {
    const me = await signIn();
    for (const body of [{}, { source: "" }, { source: "   " }, { source: "s".repeat(65) }, { source: "x", detail: "d".repeat(501) }, { source: "a\nb" }, { source: "x", other: 1 }]) {
      await expectError(await call("/v1/self/signup-source", { session: me.session, json: body }), 400, "invalid_request");
    }
    expect(await env.DB.prepare("SELECT count(*) AS n FROM signup_sources WHERE human_id = ?1").bind(me.humanId).first("n")).toBe(0);
    const first = await json<Obj>(await call("/v1/self/signup-source", { session: me.session, json: { source: " friend ", detail: "Ada told me" } }), 201);
    expect(Object.keys(first).sort()).toEqual(["detail", "recorded_at", "source"]);
    expect(first).toMatchObject({ source: "friend", detail: "Ada told me" });
    const err = await expectError(await call("/v1/self/signup-source", { session: me.session, json: { source: "search" } }), 409, "conflict");
    expect(err.details?.recorded).toEqual(first);
    const row = await env.DB.prepare("SELECT source, detail FROM signup_sources WHERE human_id = ?1").bind(me.humanId).first();
    expect(row).toEqual({ source: "friend", detail: "Ada told me" });
    const other = await signIn();
    expect(await json<Obj>(await call("/v1/self/signup-source", { session: other.session, json: { source: "search", detail: "" } }), 201)).toMatchObject({ detail: null });
  });
});

describe("GET /v1/self/push-subscription/vapid-public-key", () => {
  it("development: one key, generated once and kept in D1, a 65-byte uncompressed P-256 point", async () => {
    const me = await signIn();
    const a = await json<{ public_key: string }>(await call("/v1/self/push-subscription/vapid-public-key", { session: me.session }), 200);
    expect(Object.keys(a)).toEqual(["public_key"]);
    expect(a.public_key).toMatch(/^[A-Za-z0-9_-]+$/);
    const raw = fromB64url(a.public_key);
    expect(raw.byteLength).toBe(65);
    expect(raw[0]).toBe(4);
    const b = await json<{ public_key: string }>(await call("/v1/self/push-subscription/vapid-public-key", { session: (await signIn()).session }), 200);
    expect(b.public_key).toBe(a.public_key);
    const stored = JSON.parse(String(await env.DB.prepare("SELECT value FROM relay_keys WHERE name = 'vapid'").first("value"))) as JsonWebKey;
    expect(b64url(new Uint8Array([4, ...fromB64url(stored.x!), ...fromB64url(stored.y!)]))).toBe(a.public_key);
    // The stored key can sign (it is a real ECDSA P-256 key).
    const key = await crypto.subtle.importKey("jwk", stored, { name: "ECDSA", namedCurve: "P-256" }, false, ["sign"]);
    expect((await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, key, new Uint8Array([1]))).byteLength).toBe(64);
    await expectError(await call("/v1/self/push-subscription/vapid-public-key"), 401, "unauthorized");
  });

  it("VAPID_PRIVATE_KEY as a bare base64url scalar or a JWK gives the matching public key; missing or invalid in production → 501", async () => {
    const me = await signIn();
    const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]) as CryptoKeyPair;
    const jwk = await crypto.subtle.exportKey("jwk", pair.privateKey) as JsonWebKey;
    const expected = b64url(new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey) as ArrayBuffer));
    const path = "/v1/self/push-subscription/vapid-public-key";
    for (const secret of [jwk.d!, JSON.stringify({ kty: "EC", crv: "P-256", d: jwk.d, x: jwk.x, y: jwk.y })]) {
      const res = await callWith({ VAPID_PRIVATE_KEY: secret, RELAY_ENV: "production" }, path, { session: me.session });
      expect((await json<{ public_key: string }>(res, 200)).public_key).toBe(expected);
    }
    const missing = await expectError(await callWith({ RELAY_ENV: "production" }, path, { session: me.session }), 501, "not_implemented");
    expect(missing.details?.reason).toBe("vapid_key_missing");
    const other = await crypto.subtle.exportKey("jwk", (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign"]) as CryptoKeyPair).privateKey) as JsonWebKey;
    for (const bad of ["not a key", b64url(new Uint8Array(32)), b64url(new Uint8Array(31).fill(7)), "{", JSON.stringify({ ...jwk, x: other.x, y: other.y, key_ops: undefined })]) {
      const err = await expectError(await callWith({ VAPID_PRIVATE_KEY: bad, RELAY_ENV: "production" }, path, { session: me.session }), 501, "not_implemented");
      expect(err.details?.reason).toBe("vapid_key_invalid");
    }
  });
});

describe("push subscriptions", () => {
  it("save 201, save again 200 (keys updated), another account saving the same endpoint takes it over (201)", async () => {
    const me = await signIn();
    const url = endpoint();
    const keys = await browserKeys();
    const created = await json<Obj>(await subscribe(me, { endpoint: url, expirationTime: null, keys }), 201);
    expect(Object.keys(created).sort()).toEqual(["created_at", "endpoint", "expires_at", "id", "updated_at"]);
    expect(created).toMatchObject({ endpoint: url, expires_at: null });
    const newer = await browserKeys();
    const when = Date.UTC(2030, 0, 1);
    const updated = await json<Obj>(await subscribe(me, { endpoint: url, expirationTime: when, keys: newer }), 200);
    expect(updated).toMatchObject({ id: created.id, expires_at: new Date(when).toISOString(), created_at: created.created_at });
    expect(await subscriptions(me.humanId)).toEqual([{ endpoint: url, human_id: me.humanId, ...newer }]);

    const next = await signIn();
    const moved = await json<Obj>(await subscribe(next, { endpoint: url, keys: newer }), 201);
    expect(moved.id).not.toBe(created.id);
    expect(await subscriptions(me.humanId)).toEqual([]);
    expect((await subscriptions(next.humanId)).map((r) => r.endpoint)).toEqual([url]);
  });

  it("bad subscriptions → 400 with the field; nothing saved", async () => {
    const me = await signIn();
    const keys = await browserKeys();
    const bad: Array<[unknown, string]> = [
      [{ keys }, "endpoint"],
      [{ endpoint: "http://push.example.com/x", keys }, "endpoint"],
      [{ endpoint: "https://user:pw@push.example.com/x", keys }, "endpoint"],
      [{ endpoint: "not a url", keys }, "endpoint"],
      [{ endpoint: "https://10.0.0.1/push", keys }, "endpoint"],
      [{ endpoint: "https://push.local/x", keys }, "endpoint"],
      [{ endpoint: endpoint() }, "keys"],
      [{ endpoint: endpoint(), keys: { ...keys, p256dh: b64url(new Uint8Array(64)) } }, "keys.p256dh"],
      [{ endpoint: endpoint(), keys: { ...keys, p256dh: "!!!" } }, "keys.p256dh"],
      [{ endpoint: endpoint(), keys: { ...keys, auth: b64url(new Uint8Array(8)) } }, "keys.auth"],
      [{ endpoint: endpoint(), keys: { ...keys, extra: "x" } }, "keys.extra"],
      [{ endpoint: endpoint(), keys, expirationTime: "soon" }, "expirationTime"],
      [{ endpoint: endpoint(), keys, user: "me" }, "user"],
    ];
    for (const [body, field] of bad) {
      const err = await expectError(await subscribe(me, body), 400, "invalid_request");
      expect(err.details?.field).toBe(field);
    }
    await expectError(await call("/v1/self/push-subscriptions", { session: me.session, origin: "https://evil.example", json: { endpoint: endpoint(), keys } }), 403, "csrf_origin_mismatch");
    expect(await subscriptions(me.humanId)).toEqual([]);
    // Development mode (CONTRACT §3) takes a loopback push service over plain http.
    await json(await subscribe(me, { endpoint: "http://127.0.0.1:9/push/local", keys }), 201);
  });

  it("DELETE by ?endpoint= or by body; idempotent; never someone else's", async () => {
    const me = await signIn();
    const other = await signIn();
    const [a, b, theirs] = [endpoint(), endpoint(), endpoint()];
    for (const url of [a, b]) await json(await subscribe(me, { endpoint: url, keys: await browserKeys() }), 201);
    await json(await subscribe(other, { endpoint: theirs, keys: await browserKeys() }), 201);
    expect((await call(`/v1/self/push-subscriptions?endpoint=${encodeURIComponent(a)}`, { method: "DELETE", session: me.session })).status).toBe(204);
    expect((await call("/v1/self/push-subscriptions", { method: "DELETE", session: me.session, json: { endpoint: b } })).status).toBe(204);
    expect((await call("/v1/self/push-subscriptions", { method: "DELETE", session: me.session, json: { endpoint: b } })).status).toBe(204);
    expect((await call("/v1/self/push-subscriptions", { method: "DELETE", session: me.session, json: { endpoint: theirs } })).status).toBe(204);
    expect(await subscriptions(me.humanId)).toEqual([]);
    expect((await subscriptions(other.humanId)).map((r) => r.endpoint)).toEqual([theirs]);
    await expectError(await call("/v1/self/push-subscriptions", { method: "DELETE", session: me.session }), 400, "invalid_request");
    await expectError(await call("/v1/self/push-subscriptions", { method: "DELETE", session: me.session, json: { url: theirs } }), 400, "invalid_request");
  });

  it(`keeps at most ${MAX_PUSH_SUBSCRIPTIONS} per account, dropping the least recently saved`, async () => {
    const me = await signIn();
    const urls: string[] = [];
    for (let i = 0; i < MAX_PUSH_SUBSCRIPTIONS + 2; i++) {
      urls.push(endpoint());
      await json(await subscribe(me, { endpoint: urls[i], keys: await browserKeys() }), 201);
      // Each save in a later millisecond, so "least recently saved" is one order.
      await clockPast();
    }
    const kept = (await subscriptions(me.humanId)).map((r) => r.endpoint).sort();
    expect(kept).toEqual(urls.slice(2).sort());
  });
});

describe("usage", () => {
  it("meters count live apps, rows and bytes from the apps themselves, beside the limits; flows total this month", async () => {
    const s = await setup();
    const second = await anotherApp(s);
    const deleted = await anotherApp(s);
    for (let i = 0; i < 3; i++) await json(await call(`${s.path}/collections/open`, { key: s.key, json: { data: { n: i } } }), 201);
    await json(await call(`/v1/apps/${second.app_id}/collections/secret`, { key: s.key, json: { data: { n: 1 } } }), 201);
    await json(await call(`/v1/apps/${deleted.app_id}/collections/secret`, { key: s.key, json: { data: { n: 1 } } }), 201);
    await json(await call(`/v1/apps/${deleted.app_id}`, { method: "DELETE", key: s.key }), 200);

    const usage = await json<{ meters: Obj; apps: Array<Obj>; month: { start: string; flows: Obj } }>(await call("/v1/self/usage", { session: s.who.human.session }), 200);
    expect(usage.meters.apps).toEqual({ used: 2, limit: 100 });
    expect(usage.meters.rows).toEqual({ used: 4, limit_per_app: 1000 });
    const byApp = Object.fromEntries(usage.apps.map((a) => [a.app_id, a]));
    expect(Object.keys(byApp).sort()).toEqual([s.app.app_id, second.app_id].sort());
    expect(byApp[s.app.app_id]).toMatchObject({ slug: s.app.slug, rows: 3, row_limit: 1000, storage_limit: 52_428_800 });
    expect(byApp[second.app_id]).toMatchObject({ rows: 1 });
    const storage = usage.meters.storage_bytes as { used: number; limit_per_app: number };
    expect(storage.used).toBe(usage.apps.reduce((n, a) => n + Number(a.storage_bytes), 0));
    expect(storage.used).toBeGreaterThan(0);
    expect(storage.limit_per_app).toBe(52_428_800);
    const now = new Date();
    expect(usage.month.start).toBe(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString());
    expect(usage.month.flows).toEqual({ emails: 0, push_notifications: 0, webhook_deliveries: 0, ingest_deliveries: 0, agent_tasks: 0 });

    await recordFlow(env, { humanId: s.who.human.humanId, appId: s.app.app_id, metric: "emails", count: 2 });
    await recordFlow(env, { humanId: s.who.human.humanId, appId: second.app_id, metric: "emails" });
    await recordFlow(env, { humanId: s.who.human.humanId, appId: s.app.app_id, metric: "webhook_deliveries", count: 5 });
    // Last month's flows are not this month's.
    await recordFlow(env, { humanId: s.who.human.humanId, appId: s.app.app_id, metric: "emails", count: 100, at: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1) - 3_600_000) });
    const after = await json<{ month: { flows: Obj } }>(await call("/v1/self/usage", { session: s.who.human.session }), 200);
    expect(after.month.flows).toMatchObject({ emails: 3, webhook_deliveries: 5, agent_tasks: 0 });
    // Someone else's usage is their own.
    const other = await json<{ meters: Obj; month: { flows: Obj } }>(await call("/v1/self/usage", { session: (await signIn()).session }), 200);
    expect(other.meters.apps).toEqual({ used: 0, limit: 100 });
    expect(other.month.flows.emails).toBe(0);
    const capped = await json<{ meters: Obj }>(await callWith({ MAX_APPS_PER_ACCOUNT: "7", MAX_ROWS_PER_APP: "9" }, "/v1/self/usage", { session: s.who.human.session }), 200);
    expect(capped.meters).toMatchObject({ apps: { used: 2, limit: 7 }, rows: { used: 4, limit_per_app: 9 } });
    await expectError(await call("/v1/self/usage"), 401, "unauthorized");
  });

  it("series: every day (default 30) or hour bucket, zeros included, with month-to-date; bad queries 400", async () => {
    const me = await signIn();
    const now = new Date();
    await recordFlow(env, { humanId: me.humanId, appId: "a1", metric: "emails", count: 4 });
    await recordFlow(env, { humanId: me.humanId, appId: "a2", metric: "agent_tasks", at: new Date(now.getTime() - 2 * 86_400_000) });
    const days = await json<{ granularity: string; start: string; end: string; points: Array<{ start: string; flows: Obj }>; month_to_date: Obj }>(
      await call("/v1/self/usage/series", { session: me.session }), 200);
    expect(days.granularity).toBe("day");
    expect(days.points).toHaveLength(30);
    const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())).toISOString();
    expect(days.points[29]).toEqual({ start: today, flows: { emails: 4, push_notifications: 0, webhook_deliveries: 0, ingest_deliveries: 0, agent_tasks: 0 } });
    expect(days.points[27].flows.agent_tasks).toBe(1);
    expect(days.points[0].start).toBe(days.start);
    expect(days.points.slice(0, 27).every((p) => Object.values(p.flows).every((n) => n === 0))).toBe(true);

    const hours = await json<{ points: Array<{ start: string; flows: Obj }> }>(await call("/v1/self/usage/series?granularity=hour&days=2", { session: me.session }), 200);
    expect(hours.points).toHaveLength(48);
    expect(hours.points[47].start).toBe(new Date(Math.floor(now.getTime() / 3_600_000) * 3_600_000).toISOString());
    expect(hours.points[47].flows.emails).toBe(4);
    expect((await json<{ points: unknown[] }>(await call("/v1/self/usage/series?days=7", { session: me.session }), 200)).points).toHaveLength(7);
    for (const q of ["granularity=week", "days=0", "days=91", "granularity=hour&days=8", "days=x"]) {
      const err = await expectError(await call(`/v1/self/usage/series?${q}`, { session: me.session }), 400, "invalid_request");
      expect(["granularity", "days"]).toContain(err.details?.field);
    }
  });
});
