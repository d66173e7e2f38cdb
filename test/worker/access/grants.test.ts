// Grant links end to end: minting for a declared custom role (shapes, defaults, clamping,
// every refusal with nothing written), listing without token material, revoking, the
// exchange on the app origin (once, multi, max_uses, a remembered browser, expired,
// revoked, forged, another app's link — each answering grant_invalid and minting
// nothing), and the holder's principal as the app origin's data paths get it from
// `grantPrincipalFor`: its role, its own identity, its pin — a pinned holder reaches only
// the pinned rows.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, claimedAgent, count, expectError, json, signIn } from "../helpers";
import { appCall } from "../serve/helpers";
import { grantPrincipalFor } from "../../../src/auth/grant-holder";
import { appStore } from "../../../src/apps/store";
import type { Principal } from "../../../src/permissions";
import { findAppBySlug } from "../../../src/db/apps";
import {
  DAY, GRANT_VIEW_KEYS, offBy, past, setGrantColumn, setup, sibling, unchanged, type App, type GrantView, type Obj,
} from "./fixtures";

const GRANT_TOKEN = /^gr_[0-9a-f]{32}$/;
const HOLDER_TOKEN = /^grh_[0-9a-f]{32}$/;

interface Exchanged {
  token: string;
  holder_id: string;
  grant_id: string;
  role: string;
  pin: Obj | null;
  expires_at: string;
  reused: boolean;
}

function tokenOf(url: string): string {
  const match = /#g=(gr_[0-9a-f]{32})$/.exec(url);
  expect(match, url).not.toBeNull();
  return match![1];
}

function exchange(app: App, grant: string, opts: { remembered?: string; origin?: string; method?: string; body?: unknown } = {}): Promise<Response> {
  const headers: Record<string, string> = {};
  if (opts.origin) headers.origin = opts.origin;
  return appCall(app.slug, "/_svc/grant", {
    method: opts.method ?? "POST",
    headers,
    ...(opts.method === "GET" || opts.method === "HEAD" ? {} : { json: opts.body ?? { grant } }),
    ...(opts.remembered ? { token: opts.remembered } : {}),
  });
}

async function exchanged(app: App, grant: string, remembered?: string): Promise<Exchanged> {
  const res = await exchange(app, grant, { remembered });
  expect(res.headers.get("cache-control")).toBe("no-store");
  return json<Exchanged>(res, 200);
}

async function principal(app: App, holderToken: string): Promise<Principal | null> {
  const row = (await findAppBySlug(env, app.slug))!;
  return grantPrincipalFor(env, row, holderToken);
}

/** The app's AppStore, called with `p` as the principal (as the app origin's data paths do). */
async function storeAs(app: App, p: Principal) {
  const row = (await findAppBySlug(env, app.slug))!;
  const ctx = { appId: app.appId, version: row.currentVersion!, principal: p };
  const store = appStore(env, app.appId);
  return {
    list: async (c: string) => store.listRows(ctx, c, { limit: 100 }),
    get: (c: string, key: string) => store.getRow(ctx, c, key),
    create: (c: string, data: unknown, key?: string) => store.createRow(ctx, c, key === undefined ? { data } : { data, key }),
    update: (c: string, key: string, data: unknown) => store.updateRow(ctx, c, key, { data }),
  };
}

function keysOf(outcome: { ok: boolean; value?: { rows: Array<{ key: string }> } }): string[] {
  expect(outcome.ok).toBe(true);
  return outcome.value!.rows.map((r) => r.key).sort();
}

function codeOf(outcome: { ok: boolean; error?: { code: string } }): string | undefined {
  expect(outcome.ok).toBe(false);
  return outcome.error?.code;
}

describe("minting", () => {
  it("mints a multi link by default: grant_url is the app's own URL with the token in #g=, stored as a hash", async () => {
    const app = await setup();
    const res = await app.call(app.grants, { json: { role: "guest", label: "for the team" } });
    const body = await json<GrantView & { grant_url: string }>(res, 201);
    expect(Object.keys(body).sort()).toEqual([...GRANT_VIEW_KEYS, "grant_url"].sort());
    expect(body.grant_url.startsWith(`${app.url}#g=`)).toBe(true);
    expect(app.url).toBe(`http://${app.slug}.localhost:8787/`);
    const token = tokenOf(body.grant_url);
    expect(token).toMatch(GRANT_TOKEN);
    expect(body).toMatchObject({
      role: "guest", mode: "multi", max_uses: null, use_count: 0, claim_count: 0, pin_row_key: null, pin_where: null,
      label: "for the team", active: true, revoked_at: null,
    });
    expect(offBy(body.expires_at, 30 * DAY)).toBeLessThan(60_000);
    const stored = await env.DB.prepare("SELECT * FROM grant_links WHERE id = ?1").bind(body.id).first<Obj>();
    expect(JSON.stringify(stored)).not.toContain(token);
    expect(stored!.token_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("once forces max_uses 1; multi keeps max_uses; ttl is clamped; pins are kept", async () => {
    const app = await setup();
    const once = await app.mintGrant({ role: "staff", mode: "once", max_uses: 5, ttl_seconds: 3600 });
    expect(once).toMatchObject({ mode: "once", max_uses: 1 });
    expect(offBy(once.expires_at, 3600)).toBeLessThan(60_000);
    const multi = await app.mintGrant({ role: "staff", mode: "multi", max_uses: 3, ttl_seconds: 10 * 365 * DAY });
    expect(multi).toMatchObject({ mode: "multi", max_uses: 3 });
    expect(offBy(multi.expires_at, 365 * DAY)).toBeLessThan(60_000);
    const pinnedKey = await app.mintGrant({ role: "guest", pin: { row_key: "k-1" } });
    expect(pinnedKey).toMatchObject({ pin_row_key: "k-1", pin_where: null });
    const where = [{ field: "project", op: "eq", value: "a" }, { field: "text", op: "in", value: ["x", "y"] }];
    const pinnedWhere = await app.mintGrant({ role: "guest", pin: { where } });
    expect(pinnedWhere).toMatchObject({ pin_row_key: null, pin_where: where });
    const viaSession = await json<GrantView>(await app.call(app.grants, { session: app.human.session, json: { role: "guest", pin: null, label: "" } }), 201);
    expect(viaSession).toMatchObject({ pin_row_key: null, label: null });
  });

  it("refuses built-in roles, undeclared roles and bad bodies with 400, writing nothing", async () => {
    const app = await setup();
    for (const role of ["owner", "member", "anyone", "agent", "creator", "editor", "author", "boss", ""]) {
      await unchanged(app.appId, async () => expectError(await app.call(app.grants, { json: { role } }), 400, "invalid_request"));
    }
    const builtIn = await expectError(await app.call(app.grants, { json: { role: "member" } }), 400, "invalid_request");
    expect(builtIn.details).toMatchObject({ field: "role", declared: ["staff", "guest"] });
    const bad: unknown[] = [
      {},
      { role: "staff", mode: "twice" },
      { role: "staff", max_uses: 0 },
      { role: "staff", max_uses: 1.5 },
      { role: "staff", ttl_seconds: 0 },
      { role: "staff", ttl_seconds: null },
      { role: "staff", pin: {} },
      { role: "staff", pin: { row_key: "bad key!" } },
      { role: "staff", pin: { row_key: "a", where: [] } },
      { role: "staff", pin: { where: [] } },
      { role: "staff", pin: { where: [{ field: "project", op: "like", value: "a" }] } },
      { role: "staff", pin: { where: [{ field: "project", op: "in", value: "a" }] } },
      { role: "staff", pin: { where: [{ field: "project", op: "eq", value: ["a"] }] } },
      { role: "staff", pin: { where: [{ field: "$.x", op: "eq", value: "a" }] } },
      { role: "staff", pin: { where: [{ field: "project", op: "eq", value: { a: 1 } }] } },
      { role: "staff", label: "x".repeat(201) },
      { role: "staff", extra: true },
      [],
    ];
    for (const body of bad) {
      await unchanged(app.appId, async () => expectError(await app.call(app.grants, { json: body }), 400, "invalid_request"));
    }
    expect(await count("grant_links", "app_id = ?1", app.appId)).toBe(0);
  });

  it("an app without custom roles has none to grant", async () => {
    const app = await setup({ "x-service-manifest": { app: { name: "No roles" }, collections: { notes: { read: ["owner"], write: ["owner"], delete: ["owner"] } } } });
    const e = await expectError(await app.call(app.grants, { json: { role: "staff" } }), 400, "invalid_request");
    expect(e.details).toMatchObject({ declared: [] });
  });

  it("only the owner's agent or session manages grants; a service credential is 401", async () => {
    const app = await setup();
    const link = await app.mintGrant({ role: "guest" });
    const { token } = await app.mint({ mode: "following" });
    const stranger = await signIn();
    const strangerAgent = await claimedAgent(stranger);
    const routes: Array<[string, string, unknown?]> = [
      ["POST", app.grants, { role: "guest" }],
      ["GET", app.grants],
      ["DELETE", `${app.grants}/${link.id}`],
    ];
    for (const [method, path, body] of routes) {
      const opts = body === undefined ? { method } : { method, json: body };
      await unchanged(app.appId, async () => {
        await expectError(await call(path, opts), 401, "unauthorized");
        await expectError(await call(path, { ...opts, key: token }), 401, "unauthorized");
        await expectError(await call(path, { ...opts, key: strangerAgent.api_key }), 404, "app_not_found");
        await expectError(await call(path, { ...opts, session: stranger.session }), 404, "app_not_found");
      });
    }
  });
});

describe("listing and revoking", () => {
  it("lists links newest first with usage and never any token material", async () => {
    const app = await setup();
    const a = await app.mintGrant({ role: "guest", label: "a" });
    const b = await app.mintGrant({ role: "staff", mode: "once", pin: { row_key: "r1" } });
    await exchanged(app, tokenOf(a.grant_url));
    const res = await app.call(app.grants);
    const text = await res.clone().text();
    expect(text).not.toContain(tokenOf(a.grant_url));
    expect(text).not.toContain(tokenOf(b.grant_url));
    expect(text).not.toContain("grant_url");
    expect(text).not.toMatch(/[0-9a-f]{64}/);
    const list = (await json<{ grants: GrantView[] }>(res, 200)).grants;
    expect(list.map((g) => g.id)).toEqual([b.id, a.id]);
    for (const g of list) expect(Object.keys(g).sort()).toEqual(GRANT_VIEW_KEYS);
    expect(list[1]).toMatchObject({ use_count: 1, claim_count: 1, label: "a", active: true });
    expect(list[0]).toMatchObject({ mode: "once", max_uses: 1, use_count: 0, pin_row_key: "r1" });
  });

  it("revoke is idempotent, rejects the link and its holders at once; unknown ids are 404", async () => {
    const app = await setup();
    const link = await app.mintGrant({ role: "guest" });
    const held = await exchanged(app, tokenOf(link.grant_url));
    expect(await principal(app, held.token)).not.toBeNull();
    const revoked = await json<GrantView>(await app.call(`${app.grants}/${link.id}`, { method: "DELETE" }), 200);
    expect(revoked).toMatchObject({ id: link.id, active: false });
    expect(revoked.revoked_at).not.toBeNull();
    const again = await json<GrantView>(await app.call(`${app.grants}/${link.id}`, { method: "DELETE", session: app.human.session }), 200);
    expect(again.revoked_at).toBe(revoked.revoked_at);
    expect(await principal(app, held.token)).toBeNull();
    const e = await unchanged(app.appId, async () => expectError(await exchange(app, tokenOf(link.grant_url)), 401, "grant_invalid"));
    expect(e.details).toMatchObject({ reason: "revoked" });
    // The remembered holder is refused too.
    await expectError(await exchange(app, tokenOf(link.grant_url), { remembered: held.token }), 401, "grant_invalid");
    await unchanged(app.appId, async () => expectError(await app.call(`${app.grants}/grant_missing`, { method: "DELETE" }), 404, "not_found"));
    const other = await sibling(app);
    const theirs = await other.mintGrant({ role: "guest" });
    await unchanged(other.appId, async () => expectError(await app.call(`${app.grants}/${theirs.id}`, { method: "DELETE" }), 404, "not_found"));
    expect((await other.listGrants())[0].revoked_at).toBeNull();
  });
});

describe("wrong verbs", () => {
  it("answers 405 with Allow on the grant routes", async () => {
    const app = await setup();
    const put = await app.call(app.grants, { method: "PUT", json: {} });
    expect(put.headers.get("allow")).toContain("POST");
    await expectError(put, 405, "method_not_allowed");
    const patch = await app.call(`${app.grants}/grant_x`, { method: "PATCH", json: {} });
    expect(patch.headers.get("allow")).toBe("DELETE");
    await expectError(patch, 405, "method_not_allowed");
  });
});

describe("the exchange on the app origin", () => {
  it("a once link is claimed by the first browser; another browser is refused; the first browser's repeat is free", async () => {
    const app = await setup();
    const link = await app.mintGrant({ role: "staff", mode: "once" });
    const grant = tokenOf(link.grant_url);
    const first = await exchanged(app, grant);
    expect(Object.keys(first).sort()).toEqual(["expires_at", "grant_id", "holder_id", "pin", "reused", "role", "token"]);
    expect(first).toMatchObject({ grant_id: link.id, role: "staff", pin: null, expires_at: link.expires_at, reused: false });
    expect(first.token).toMatch(HOLDER_TOKEN);
    const stored = await env.DB.prepare("SELECT * FROM grant_holders WHERE id = ?1").bind(first.holder_id).first<Obj>();
    expect(JSON.stringify(stored)).not.toContain(first.token);
    const e = await unchanged(app.appId, async () => expectError(await exchange(app, grant), 401, "grant_invalid"));
    expect(e.details).toMatchObject({ reason: "spent" });
    const repeat = await exchanged(app, grant, first.token);
    expect(repeat).toMatchObject({ token: first.token, holder_id: first.holder_id, reused: true });
    expect((await app.listGrants())[0]).toMatchObject({ use_count: 1, claim_count: 2 });
    expect(await count("grant_holders", "grant_id = ?1", link.id)).toBe(1);
  });

  it("a multi link admits new holders up to max_uses; unlimited without it", async () => {
    const app = await setup();
    const capped = await app.mintGrant({ role: "guest", max_uses: 2 });
    const grant = tokenOf(capped.grant_url);
    const a = await exchanged(app, grant);
    const b = await exchanged(app, grant);
    expect(a.holder_id).not.toBe(b.holder_id);
    expect(a.token).not.toBe(b.token);
    const e = await unchanged(app.appId, async () => expectError(await exchange(app, grant), 401, "grant_invalid"));
    expect(e.details).toMatchObject({ reason: "spent" });
    // A holder of ANOTHER link presenting itself does not make this one reusable.
    const open = await app.mintGrant({ role: "guest" });
    const openToken = tokenOf(open.grant_url);
    const held = await exchanged(app, openToken);
    await unchanged(app.appId, async () => expectError(await exchange(app, grant, { remembered: held.token }), 401, "grant_invalid"));
    for (let i = 0; i < 4; i++) await exchanged(app, openToken);
    expect((await app.listGrants()).find((g) => g.id === open.id)).toMatchObject({ use_count: 5, max_uses: null });
    expect((await app.listGrants()).find((g) => g.id === capped.id)).toMatchObject({ use_count: 2, claim_count: 2 });
  });

  it("expired, forged, malformed and another app's tokens are grant_invalid and mint nothing", async () => {
    const app = await setup();
    const other = await sibling(app);
    const expired = await app.mintGrant({ role: "guest" });
    const held = await exchanged(app, tokenOf(expired.grant_url));
    await setGrantColumn(expired.id, "expires_at", past());
    const e1 = await unchanged(app.appId, async () => expectError(await exchange(app, tokenOf(expired.grant_url)), 401, "grant_invalid"));
    expect(e1.details).toMatchObject({ reason: "expired" });
    expect(await principal(app, held.token)).toBeNull();
    for (const forged of [`gr_${"0".repeat(32)}`, "gr_nothex", "abc", `grh_${"1".repeat(32)}`, held.token, `${tokenOf(expired.grant_url)}0`]) {
      const e = await unchanged(app.appId, async () => expectError(await exchange(app, forged), 401, "grant_invalid"));
      expect(e.details).toMatchObject({ reason: "unknown" });
    }
    const theirs = await other.mintGrant({ role: "guest", mode: "once" });
    await unchanged(other.appId, () => unchanged(app.appId, async () => expectError(await exchange(app, tokenOf(theirs.grant_url)), 401, "grant_invalid")));
    // Still claimable on its own app.
    const mine = await exchanged(other, tokenOf(theirs.grant_url));
    // …and its holder is nobody on the first app.
    expect(await principal(app, mine.token)).toBeNull();
    expect(await principal(other, mine.token)).not.toBeNull();
  });

  it("answers a bad body with 400, another verb with 405, another origin with 403", async () => {
    const app = await setup();
    const link = await app.mintGrant({ role: "guest", mode: "once" });
    const grant = tokenOf(link.grant_url);
    for (const body of [{}, { grant: 5 }, { grant, extra: 1 }, [grant]]) {
      await unchanged(app.appId, async () => expectError(await exchange(app, grant, { body }), 400, "invalid_request"));
    }
    for (const method of ["GET", "PUT", "DELETE"]) {
      const res = await exchange(app, grant, { method });
      expect(res.headers.get("allow")).toBe("POST");
      await expectError(res, 405, "method_not_allowed");
    }
    await unchanged(app.appId, async () => expectError(await exchange(app, grant, { origin: "https://evil.example" }), 403, "forbidden"));
    await unchanged(app.appId, async () => expectError(await exchange(app, grant, { origin: `http://${(await sibling(app)).slug}.localhost:8787` }), 403, "forbidden"));
    const ok = await exchange(app, grant, { origin: `http://${app.slug}.localhost:8787` });
    expect(ok.status).toBe(200);
    await ok.arrayBuffer();
  });

  it("works on public and link apps alike, without any other credential", async () => {
    for (const visibility of ["public", "link"]) {
      const app = await setup(undefined, visibility);
      const link = await app.mintGrant({ role: "guest" });
      expect(tokenOf(link.grant_url)).toMatch(GRANT_TOKEN);
      const held = await exchanged(app, tokenOf(link.grant_url));
      expect(await principal(app, held.token)).toMatchObject({ kind: "grant", role: "guest" });
    }
  });
});

describe("the holder's principal", () => {
  it("is the grant principal with the holder's own id, the link's role and pin", async () => {
    const app = await setup();
    const link = await app.mintGrant({ role: "staff", pin: { where: [{ field: "project", op: "eq", value: "a" }] } });
    const held = await exchanged(app, tokenOf(link.grant_url));
    expect(held.pin).toEqual({ where: [{ field: "project", op: "eq", value: "a" }] });
    const p = await principal(app, held.token);
    expect(p).toEqual({ kind: "grant", grantId: held.holder_id, linkId: held.grant_id, role: "staff", pin: { where: [{ field: "project", op: "eq", value: "a" }] } });
    const row = (await findAppBySlug(env, app.slug))!;
    expect(await grantPrincipalFor(env, row, held.token, { ip: "203.0.113.9" })).toMatchObject({ ip: "203.0.113.9" });
    expect(await grantPrincipalFor(env, row, "not a token")).toBeNull();
    expect(await grantPrincipalFor(env, row, tokenOf(link.grant_url))).toBeNull();
    expect(await grantPrincipalFor(env, { ...row, status: "deleted" }, held.token)).toBeNull();
  });

  it("a key-pinned holder reaches only the pinned row", async () => {
    const app = await setup();
    const k1 = await app.create("notes", { text: "one" }, "k1");
    await app.create("notes", { text: "two" }, "k2");
    const link = await app.mintGrant({ role: "guest", pin: { row_key: "k1" } });
    const held = await exchanged(app, tokenOf(link.grant_url));
    expect(held.pin).toEqual({ row_key: "k1" });
    const store = await storeAs(app, (await principal(app, held.token))!);
    expect(keysOf(await store.list("notes"))).toEqual(["k1"]);
    const got = await store.get("notes", "k1");
    expect(got.ok && got.value.data).toEqual(k1.data);
    expect(codeOf(await store.get("notes", "k2"))).toBe("row_not_found");
    expect(codeOf(await store.list("secrets"))).toBe("collection_read_forbidden");
    // An unpinned guest sees both.
    const open = await app.mintGrant({ role: "guest" });
    const openHeld = await exchanged(app, tokenOf(open.grant_url));
    expect(keysOf(await (await storeAs(app, (await principal(app, openHeld.token))!)).list("notes"))).toEqual(["k1", "k2"]);
  });

  it("a where-pinned holder reads and writes only inside the pin, stamped as the holder; :own is per holder", async () => {
    const app = await setup();
    await app.create("notes", { text: "a1", project: "a" }, "a1");
    await app.create("notes", { text: "b1", project: "b" }, "b1");
    const link = await app.mintGrant({ role: "staff", pin: { where: [{ field: "project", op: "eq", value: "a" }] } });
    const grant = tokenOf(link.grant_url);
    const one = await exchanged(app, grant);
    const two = await exchanged(app, grant);
    const s1 = await storeAs(app, (await principal(app, one.token))!);
    const s2 = await storeAs(app, (await principal(app, two.token))!);
    expect(keysOf(await s1.list("notes"))).toEqual(["a1"]);
    expect(codeOf(await s1.get("notes", "b1"))).toBe("row_not_found");
    expect(codeOf(await s1.create("notes", { text: "outside", project: "b" }))).toBe("collection_write_forbidden");
    const created = await s1.create("notes", { text: "inside", project: "a" }, "mine");
    expect(created.ok).toBe(true);
    expect(created.ok && created.value.row.author).toEqual({ kind: "grant", id: one.holder_id });
    // staff:own — the holder updates its own row, not the owner's, not the other holder's.
    expect((await s1.update("notes", "mine", { text: "inside 2", project: "a" })).ok).toBe(true);
    expect(codeOf(await s1.update("notes", "mine", { text: "moved", project: "b" }))).toBe("collection_write_forbidden");
    expect(codeOf(await s1.update("notes", "a1", { text: "no", project: "a" }))).toBe("collection_write_forbidden");
    expect(keysOf(await s2.list("notes"))).toEqual(["a1", "mine"]);
    expect(codeOf(await s2.update("notes", "mine", { text: "not yours", project: "a" }))).toBe("collection_write_forbidden");
    // Revoking the link stops both holders on their next request.
    await json(await app.call(`${app.grants}/${link.id}`, { method: "DELETE" }), 200);
    expect(await principal(app, one.token)).toBeNull();
    expect(await principal(app, two.token)).toBeNull();
  });
});

describe("purging the app", () => {
  it("removes its credentials, links and holders", async () => {
    const app = await setup();
    await app.mint({ grants: [{ collection: "notes", ops: ["read"] }] });
    const link = await app.mintGrant({ role: "guest" });
    await exchanged(app, tokenOf(link.grant_url));
    expect(await count("grant_holders", "app_id = ?1", app.appId)).toBe(1);
    const deleted = await app.call(`/v1/apps/${app.appId}`, { method: "DELETE" });
    await deleted.arrayBuffer();
    const purged = await app.call(`/v1/apps/${app.appId}/purge`, { method: "POST" });
    expect(purged.ok).toBe(true);
    await purged.arrayBuffer();
    for (const t of ["service_credentials", "grant_links", "grant_holders"]) expect(await count(t, "app_id = ?1", app.appId)).toBe(0);
  });
});
