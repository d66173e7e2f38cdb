// /v1/self/apps*: the apps I own or joined with role, favorite flag and last view; the
// recently opened ones I can still see; my deleted ones; favorites on and off
// (idempotent); views; the template-upgrade badge (an app not installed from a
// template has none) and its dismissal; upgrading is the owner's. Apps I neither own nor joined are app_not_found, my
// own trashed app soft_deleted, and refusals change nothing.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { API, call, expectError, json, signIn, type SignedIn } from "../helpers";
import { anotherApp, member, setup, state } from "./fixtures";
import { clockPast } from "../../support/wait";

type Item = Record<string, unknown> & { id: string };

async function list(human: SignedIn, path = "/v1/self/apps"): Promise<Item[]> {
  const body = await json<{ items: Item[]; next_cursor: null }>(await call(path, { session: human.session }), 200);
  expect(body.next_cursor).toBeNull();
  return body.items;
}

function favorite(human: SignedIn, appId: string, on: boolean): Promise<Response> {
  return call(`/v1/self/apps/${appId}/favorite`, { method: on ? "PUT" : "DELETE", session: human.session });
}

function view(human: SignedIn, appId: string): Promise<Response> {
  return call(`/v1/self/apps/${appId}/view`, { method: "POST", session: human.session });
}

describe("GET /v1/self/apps", () => {
  it("owned then joined, each with role, custom roles, favorite and last_viewed_at", async () => {
    const mine = await setup();
    const theirs = await setup("link");
    const me = mine.who.human;
    await json(await call(`${theirs.path}/members`, { key: theirs.key, json: { email: me.email } }), 201);
    const items = await list(me);
    expect(items.map((i) => [i.id, i.role, i.custom_roles, i.favorite, i.last_viewed_at])).toEqual([
      [mine.app.app_id, "owner", [], false, null],
      [theirs.app.app_id, "member", [], false, null],
    ]);
    expect(items[0]).toMatchObject({ slug: mine.app.slug, url: mine.app.url, visibility: "private", status: "active", has_share_token: false });
    expect(Object.keys(items[0]).sort()).toEqual(["created_at", "custom_roles", "favorite", "has_share_token", "id", "last_activity_at", "last_viewed_at", "role", "slug", "status", "url", "visibility"]);

    await json(await favorite(me, theirs.app.slug, true), 200);
    const seen = await json<{ last_viewed_at: string }>(await view(me, mine.app.app_id), 200);
    const again = await list(me);
    expect(again.map((i) => [i.id, i.favorite, i.last_viewed_at])).toEqual([
      [mine.app.app_id, false, seen.last_viewed_at],
      [theirs.app.app_id, true, null],
    ]);
    await expectError(await call("/v1/self/apps"), 401, "unauthorized");
  });
});

describe("favorites", () => {
  it("PUT and DELETE are idempotent, by id or slug, on owned and joined apps", async () => {
    const s = await setup();
    const me = s.who.human;
    for (let i = 0; i < 2; i++) expect(await json(await favorite(me, s.app.app_id, true), 200)).toEqual({ app_id: s.app.app_id, favorite: true });
    expect(await env.DB.prepare("SELECT count(*) AS n FROM app_favorites WHERE app_id = ?1").bind(s.app.app_id).first("n")).toBe(1);
    for (let i = 0; i < 2; i++) expect(await json(await favorite(me, s.app.slug, false), 200)).toEqual({ app_id: s.app.app_id, favorite: false });
    expect(await env.DB.prepare("SELECT count(*) AS n FROM app_favorites WHERE app_id = ?1").bind(s.app.app_id).first("n")).toBe(0);
    const friend = await member(s);
    expect(await json(await favorite(friend, s.app.app_id, true), 200)).toEqual({ app_id: s.app.app_id, favorite: true });
    // Each person's favorites are their own.
    expect((await list(me)).find((i) => i.id === s.app.app_id)?.favorite).toBe(false);
    expect((await list(friend)).find((i) => i.id === s.app.app_id)?.favorite).toBe(true);
  });

  it("someone else's app → 404 app_not_found; my trashed app → 410 soft_deleted; cross-site 403 — nothing changed", async () => {
    const s = await setup();
    const stranger = await signIn();
    const before = await state(s.app.app_id);
    for (const on of [true, false]) {
      await expectError(await favorite(stranger, s.app.app_id, on), 404, "app_not_found");
      await expectError(await favorite(stranger, s.app.slug, on), 404, "app_not_found");
    }
    await expectError(await favorite(stranger, "a0000000000000000000000", true), 404, "app_not_found");
    await expectError(await call(`/v1/self/apps/${s.app.app_id}/favorite`, { method: "PUT", session: s.who.human.session, origin: "https://evil.example" }), 403, "csrf_origin_mismatch");
    await expectError(await call(`/v1/self/apps/${s.app.app_id}/favorite`, { method: "PUT", origin: API }), 401, "unauthorized");
    expect(await state(s.app.app_id)).toEqual(before);
    await json(await call(s.path, { method: "DELETE", key: s.key }), 200);
    await expectError(await favorite(s.who.human, s.app.app_id, true), 410, "soft_deleted");
    expect(await state(s.app.app_id)).toMatchObject({ favorites: [] });
  });

  it("a member who is removed can no longer mark the app", async () => {
    const s = await setup();
    const friend = await member(s);
    expect((await call(`${s.path}/members/${friend.humanId}`, { method: "DELETE", key: s.key })).status).toBe(204);
    await expectError(await favorite(friend, s.app.app_id, true), 404, "app_not_found");
  });
});

describe("views and recent apps", () => {
  it("POST view counts and stamps; recent lists what I can still see, most recent first, with limit", async () => {
    const s = await setup();
    const me = s.who.human;
    const second = await anotherApp(s);
    const other = await setup();
    await json(await call(`${other.path}/members`, { key: other.key, json: { email: me.email } }), 201);

    const first = await json<Record<string, unknown>>(await view(me, s.app.app_id), 200);
    expect(first).toMatchObject({ app_id: s.app.app_id, view_count: 1 });
    // Each view in a later millisecond, so "most recent first" is one order.
    await clockPast();
    await json(await view(me, other.app.slug), 200);
    await clockPast();
    await json(await view(me, second.app_id), 200);
    await clockPast();
    const again = await json<Record<string, unknown>>(await view(me, s.app.app_id), 200);
    expect(again.view_count).toBe(2);
    expect(String(again.last_viewed_at) > String(first.last_viewed_at)).toBe(true);

    const recent = await list(me, "/v1/self/apps/recent");
    expect(recent.map((i) => [i.id, i.role])).toEqual([[s.app.app_id, "owner"], [second.app_id, "owner"], [other.app.app_id, "member"]]);
    expect(recent[0].last_viewed_at).toBe(again.last_viewed_at);
    expect((await list(me, "/v1/self/apps/recent?limit=1")).map((i) => i.id)).toEqual([s.app.app_id]);
    for (const bad of ["0", "101", "x"]) await expectError(await call(`/v1/self/apps/recent?limit=${bad}`, { session: me.session }), 400, "invalid_request");

    // Out of sight, out of the list: my app in the trash, an app I was removed from.
    await json(await call(`/v1/apps/${second.app_id}`, { method: "DELETE", key: s.key }), 200);
    expect((await call(`${other.path}/members/${me.humanId}`, { method: "DELETE", key: other.key })).status).toBe(204);
    expect((await list(me, "/v1/self/apps/recent")).map((i) => i.id)).toEqual([s.app.app_id]);
  });

  it("view refusals: someone else's app 404, trashed 410, a body with fields 400 — no view recorded", async () => {
    const s = await setup();
    const stranger = await signIn();
    await expectError(await view(stranger, s.app.app_id), 404, "app_not_found");
    await expectError(await call(`/v1/self/apps/${s.app.app_id}/view`, { session: s.who.human.session, json: { when: "now" } }), 400, "invalid_request");
    expect((await state(s.app.app_id)).views).toEqual([]);
    await json(await call(s.path, { method: "DELETE", key: s.key }), 200);
    await expectError(await view(s.who.human, s.app.app_id), 410, "soft_deleted");
    expect((await state(s.app.app_id)).views).toEqual([]);
  });
});

describe("GET /v1/self/apps/deleted", () => {
  it("my trashed apps only, newest deletion first, with deleted_at and purge_after 30 days later", async () => {
    const s = await setup();
    const second = await anotherApp(s);
    expect(await list(s.who.human, "/v1/self/apps/deleted")).toEqual([]);
    await json(await favorite(s.who.human, s.app.app_id, true), 200);
    await json(await call(s.path, { method: "DELETE", key: s.key }), 200);
    // The second deletion in a later millisecond, so "newest deletion first" is one order.
    await clockPast();
    await json(await call(`/v1/apps/${second.app_id}`, { method: "DELETE", key: s.key }), 200);
    const items = await list(s.who.human, "/v1/self/apps/deleted");
    expect(items.map((i) => [i.id, i.status, i.favorite])).toEqual([[second.app_id, "deleted", false], [s.app.app_id, "deleted", true]]);
    for (const item of items) {
      expect(Date.parse(String(item.purge_after)) - Date.parse(String(item.deleted_at))).toBe(30 * 86_400_000);
    }
    // Trashed apps are not in the main list; someone else sees none of them.
    expect((await list(s.who.human)).map((i) => i.id)).toEqual([]);
    expect(await list(await signIn(), "/v1/self/apps/deleted")).toEqual([]);
  });
});

describe("template upgrade badge", () => {
  it("GET: the real state of an app not installed from a template — nothing on offer, no badge", async () => {
    const s = await setup();
    const body = await json<Record<string, unknown>>(await call(`/v1/self/apps/${s.app.app_id}/upgrade`, { session: s.who.human.session }), 200);
    expect(body).toEqual({
      app_id: s.app.app_id, template: null, available: false, from_version: null, to_version: null, changelog: null, snapshot_id: null,
      compat: null, breaks: [], disclosure_breaks: [],
      permissions: { external_hosts: [], embeds: [], capabilities: [], cdn: false, offline: false, webhook_rules: [], is_empty: true },
      permission_lines: [], blocked: false, blocked_reason: null, revert_available: false, badge: false, dismissed_version: null,
    });
  });

  it("dismiss: a named version is recorded (and replaced by the next); with nothing on offer and no version → 409", async () => {
    const s = await setup();
    const path = `/v1/self/apps/${s.app.slug}/upgrade/dismiss`;
    const session = s.who.human.session;
    const first = await json<Record<string, unknown>>(await call(path, { session, json: { version: "1.2.0" } }), 200);
    expect(first).toMatchObject({ app_id: s.app.app_id, dismissed_version: "1.2.0", badge: false, available: false });
    expect((await json<Record<string, unknown>>(await call(path, { session, json: { version: "2.0.0-beta.1" } }), 200)).dismissed_version).toBe("2.0.0-beta.1");
    expect((await json<Record<string, unknown>>(await call(`/v1/self/apps/${s.app.app_id}/upgrade`, { session }), 200)).dismissed_version).toBe("2.0.0-beta.1");
    const dismissals = async () => (await env.DB.prepare("SELECT version, dismissed_at FROM upgrade_dismissals WHERE app_id = ?1").bind(s.app.app_id).all()).results;
    const before = await dismissals();
    const err = await expectError(await call(path, { method: "POST", session }), 409, "conflict");
    expect(err.details?.field).toBe("version");
    for (const body of [{ version: "" }, { version: "1 .0" }, { version: "v".repeat(65) }, { version: 1 }, { other: 1 }]) {
      await expectError(await call(path, { session, json: body }), 400, "invalid_request");
    }
    expect(await dismissals()).toEqual(before);
  });

  it("a member → 403 forbidden; a stranger → 404 app_not_found; nothing recorded", async () => {
    const s = await setup();
    const friend = await member(s);
    const stranger = await signIn();
    await expectError(await call(`/v1/self/apps/${s.app.app_id}/upgrade`, { session: friend.session }), 403, "forbidden");
    await expectError(await call(`/v1/self/apps/${s.app.app_id}/upgrade/dismiss`, { session: friend.session, json: { version: "1.0.0" } }), 403, "forbidden");
    await expectError(await call(`/v1/self/apps/${s.app.app_id}/upgrade`, { session: stranger.session }), 404, "app_not_found");
    await expectError(await call(`/v1/self/apps/${s.app.app_id}/upgrade/dismiss`, { session: stranger.session, json: { version: "1.0.0" } }), 404, "app_not_found");
    expect(await env.DB.prepare("SELECT count(*) AS n FROM upgrade_dismissals WHERE app_id = ?1").bind(s.app.app_id).first("n")).toBe(0);
  });
});

describe("POST upgrade and upgrade/revert", () => {
  it("owner → 409 conflict (not installed from a template); member → 403; stranger → 404; trashed → 410", async () => {
    const s = await setup();
    const friend = await member(s);
    const stranger = await signIn();
    for (const suffix of ["", "/revert"]) {
      for (const ref of [s.app.app_id, s.app.slug]) {
        const err = await expectError(await call(`/v1/self/apps/${ref}/upgrade${suffix}`, { method: "POST", session: s.who.human.session }), 409, "conflict");
        expect(err.details).toEqual({ app_id: s.app.app_id, template: null });
        expect(err.message).toMatch(/not installed from a template/);
      }
      await expectError(await call(`/v1/self/apps/${s.app.app_id}/upgrade${suffix}`, { method: "POST", session: friend.session }), 403, "forbidden");
      await expectError(await call(`/v1/self/apps/${s.app.app_id}/upgrade${suffix}`, { method: "POST", session: stranger.session }), 404, "app_not_found");
      await expectError(await call(`/v1/self/apps/app_nope/upgrade${suffix}`, { method: "POST", session: s.who.human.session }), 404, "app_not_found");
      await expectError(await call(`/v1/self/apps/${s.app.app_id}/upgrade${suffix}`, { method: "POST" }), 401, "unauthorized");
      await expectError(await call(`/v1/self/apps/${s.app.app_id}/upgrade${suffix}`, { session: s.who.human.session, json: { x: 1 } }), 400, "invalid_request");
    }
    await json(await call(s.path, { method: "DELETE", key: s.key }), 200);
    await expectError(await call(`/v1/self/apps/${s.app.app_id}/upgrade`, { method: "POST", session: s.who.human.session }), 410, "soft_deleted");
  });
});
