// The app lifecycle (WIRE §2.2 and §2.14; spec A App, States and transitions, Apps
// endpoints): list with filters and cursor pagination, the detail record for an agent
// and for the owner's session (with the CSRF check on cookie writes), PATCH of
// visibility and timezone, share-link rotation, soft delete, restore, purge and wake,
// advisories and disclosure.
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, callWith, count, expectError, json, register } from "../helpers";
import {
  MANIFEST, WORLD_READABLE, appState, deploy, manifestWith, notesCollection, owner, redeploy, unchanged, type Created, type Owner,
} from "./fixtures";

interface Summary {
  id: string;
  slug: string;
  visibility: string;
  status: string;
  url: string;
  has_share_token: boolean;
  created_at: string;
  last_activity_at: string;
}

interface Page {
  items: Summary[];
  next_cursor: string | null;
}

const SUMMARY_KEYS = ["created_at", "has_share_token", "id", "last_activity_at", "slug", "status", "url", "visibility"];
const DETAIL_KEYS = [...SUMMARY_KEYS, "current_version", "deleted_at", "manifest", "owner_human_id", "row_count", "storage_bytes", "timezone"].sort();
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

function list(o: Owner, query = "") {
  return call(`/v1/apps${query}`, { key: o.key });
}

function del(o: Owner, id: string) {
  return call(`/v1/apps/${id}`, { key: o.key, method: "DELETE" });
}

function patch(o: Owner, id: string, body: unknown) {
  return call(`/v1/apps/${id}`, { key: o.key, method: "PATCH", json: body });
}

function post(o: Owner, id: string, action: string, body?: unknown) {
  return call(`/v1/apps/${id}/${action}`, { key: o.key, method: "POST", ...(body === undefined ? {} : { json: body }) });
}

async function setStatus(id: string, status: string): Promise<void> {
  await env.DB.prepare("UPDATE apps SET status = ?2 WHERE id = ?1").bind(id, status).run();
}

describe("list", () => {
  it("AppSummary items, newest activity first; deleted apps only on request; other owners' apps never", async () => {
    const o = await owner();
    const stranger = await owner();
    const strangers = await deploy(stranger.key);
    const a = await deploy(o.key);
    const b = await deploy(o.key, { visibility: "link" });
    const c = await deploy(o.key, { visibility: "public", slug: `pub-${crypto.randomUUID().slice(0, 8)}` });
    await redeploy(o.key, a.app_id, { html: "<p>touch</p>" }); // a is now the most recent activity
    const page = await json<Page>(await list(o), 200);
    expect(Object.keys(page).sort()).toEqual(["items", "next_cursor"]);
    expect(page.next_cursor).toBeNull();
    expect(page.items.map((i) => i.id)).toEqual([a.app_id, c.app_id, b.app_id]);
    for (const item of page.items) {
      expect(Object.keys(item).sort()).toEqual(SUMMARY_KEYS);
      expect(item.created_at).toMatch(ISO);
      expect(item.last_activity_at).toMatch(ISO);
      expect(item.status).toBe("active");
      expect(item.url).toBe(`http://${item.slug}.localhost:8787/`);
    }
    expect(page.items.find((i) => i.id === b.app_id)).toMatchObject({ visibility: "link", has_share_token: true, slug: b.slug });
    expect(page.items.find((i) => i.id === c.app_id)).toMatchObject({ visibility: "public", has_share_token: false });
    expect(page.items.some((i) => i.id === strangers.app_id)).toBe(false);

    await json(await del(o, b.app_id), 200);
    expect((await json<Page>(await list(o), 200)).items.map((i) => i.id)).toEqual([a.app_id, c.app_id]);
    const deleted = await json<Page>(await list(o, "?status=deleted"), 200);
    expect(deleted.items.map((i) => [i.id, i.status])).toEqual([[b.app_id, "deleted"]]);
    expect((await json<Page>(await list(o, "?status=all"), 200)).items.map((i) => i.id).sort()).toEqual([a.app_id, b.app_id, c.app_id].sort());
    expect((await json<Page>(await list(o, "?status=active"), 200)).items.map((i) => i.id)).toEqual([a.app_id, c.app_id]);
    await setStatus(c.app_id, "dormant");
    expect((await json<Page>(await list(o, "?status=dormant"), 200)).items.map((i) => i.id)).toEqual([c.app_id]);
    expect((await json<Page>(await list(o, "?status=active"), 200)).items.map((i) => i.id)).toEqual([a.app_id]);
    for (const status of ["archived", "suspended"]) expect((await json<Page>(await list(o, `?status=${status}`), 200)).items).toEqual([]);
  });

  it("slug is an exact match, scoped to the caller", async () => {
    const o = await owner();
    const stranger = await owner();
    const slug = `exact-${crypto.randomUUID().slice(0, 8)}`;
    const mine = await deploy(o.key, { slug });
    await deploy(o.key, { slug: `${slug}-2` });
    expect((await json<Page>(await list(o, `?slug=${slug}`), 200)).items.map((i) => i.id)).toEqual([mine.app_id]);
    expect((await json<Page>(await list(o, `?slug=${slug.slice(0, -1)}`), 200)).items).toEqual([]);
    expect((await json<Page>(await list(o, `?slug=${slug.toUpperCase()}`), 200)).items).toEqual([]);
    expect((await json<Page>(await list(stranger, `?slug=${slug}`), 200)).items).toEqual([]);
    expect((await json<Page>(await list(stranger, `?status=all&slug=${slug}&limit=1`), 200)).items).toEqual([]);
    // The CLI's resolve step: status=all&slug=&limit=1 finds deleted apps too.
    await json(await del(o, mine.app_id), 200);
    expect((await json<Page>(await list(o, `?status=all&slug=${slug}&limit=1`), 200)).items.map((i) => i.id)).toEqual([mine.app_id]);
  });

  it("limit and cursor page through every app exactly once", async () => {
    const o = await owner();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await deploy(o.key)).app_id);
    // Several apps sharing one last_activity_at: the id breaks the tie.
    await env.DB.prepare("UPDATE apps SET last_activity_at = '2030-01-01T00:00:00.000Z' WHERE id IN (?1, ?2, ?3)").bind(ids[1], ids[2], ids[3]).run();
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: Page = await json<Page>(await list(o, `?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`), 200);
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((i) => i.id));
      cursor = page.next_cursor;
      pages++;
      expect(pages).toBeLessThan(10);
    } while (cursor);
    expect(pages).toBe(4);
    expect(seen).toHaveLength(7);
    expect(new Set(seen).size).toBe(7);
    expect([...seen].sort()).toEqual([...ids].sort());
    expect(seen.slice(0, 3)).toEqual([ids[1], ids[2], ids[3]].sort().reverse());
    // A limit that divides the set exactly ends with a null cursor, not an empty page.
    const all = await json<Page>(await list(o, "?limit=7"), 200);
    expect(all.items).toHaveLength(7);
    expect(all.next_cursor).toBeNull();
    const first = await json<Page>(await list(o, "?limit=1"), 200);
    expect(first.items).toHaveLength(1);
    expect(first.next_cursor).toEqual(expect.any(String));
    // Another owner cannot use my cursor to see my apps.
    const stranger = await owner();
    expect((await json<Page>(await list(stranger, `?cursor=${encodeURIComponent(first.next_cursor!)}`), 200)).items).toEqual([]);
  });

  it.each([
    ["a cursor the relay never issued", "?cursor=nonsense", "cursor"],
    ["a base64 cursor of the wrong shape", `?cursor=${btoa("[1,2]")}`, "cursor"],
    ["a base64 null cursor", `?cursor=${btoa("null")}`, "cursor"],
    ["limit 0", "?limit=0", "limit"],
    ["limit over 200", "?limit=201", "limit"],
    ["a non-numeric limit", "?limit=ten", "limit"],
    ["a fractional limit", "?limit=1.5", "limit"],
    ["an unknown status", "?status=gone", "status"],
  ])("%s → 400 invalid_request naming it", async (_name, query, field) => {
    const o = await owner();
    const e = await expectError(await list(o, query), 400, "invalid_request");
    expect(e.details?.field).toBe(field);
  });

  it("needs a credential; an unclaimed agent sees an empty list; the owner's session sees the same list", async () => {
    const o = await owner();
    const created = await deploy(o.key);
    await expectError(await call("/v1/apps"), 401, "unauthorized");
    await expectError(await call("/v1/apps", { key: `svc_${"1".repeat(32)}` }), 401, "invalid_api_key");
    const loner = await register();
    expect(await json(await call("/v1/apps", { key: loner.api_key }), 200)).toEqual({ items: [], next_cursor: null });
    const bySession = await json<Page>(await call("/v1/apps", { session: o.human.session, origin: null }), 200);
    expect(bySession.items.map((i) => i.id)).toEqual([created.app_id]);
  });
});

describe("show", () => {
  it("AppDetail: the summary plus manifest, current_version, owner_human_id, row_count, storage_bytes (a string), timezone", async () => {
    const o = await owner();
    const created = await deploy(o.key, { visibility: "public", slug: `show-${crypto.randomUUID().slice(0, 8)}` });
    await redeploy(o.key, created.app_id, { manifest: WORLD_READABLE, force: true });
    for (const id of [created.app_id, created.slug]) {
      const detail = await json<Record<string, unknown>>(await call(`/v1/apps/${id}`, { key: o.key }), 200);
      expect(Object.keys(detail).sort()).toEqual(DETAIL_KEYS);
      expect(detail).toMatchObject({
        id: created.app_id, slug: created.slug, visibility: "public", status: "active", url: created.url, has_share_token: false,
        manifest: WORLD_READABLE, current_version: 2, owner_human_id: o.human.humanId, row_count: 0, timezone: null, deleted_at: null,
      });
      expect(detail.storage_bytes).toMatch(/^\d+$/);
      expect(detail.created_at).toMatch(ISO);
      expect(detail.last_activity_at).toMatch(ISO);
    }
  });

  it("reads the same for the owner's session cookie (GET needs no Origin)", async () => {
    const o = await owner();
    const created = await deploy(o.key);
    const byKey = await json(await call(`/v1/apps/${created.app_id}`, { key: o.key }), 200);
    const bySession = await json(await call(`/v1/apps/${created.app_id}`, { session: o.human.session, origin: null }), 200);
    expect(bySession).toEqual(byKey);
    const doc = await json<{ html: string }>(await call(`/v1/apps/${created.app_id}/document`, { session: o.human.session }), 200);
    expect(doc.html).toBe("<h1>v1</h1>");
  });

  it("row_count counts the app's live rows", async () => {
    const o = await owner();
    const created = await deploy(o.key);
    for (const text of ["a", "b", "c"]) {
      await json(await call(`/v1/apps/${created.app_id}/collections/notes`, { key: o.key, json: { data: { text }, key: text } }), 201);
    }
    await json(await call(`/v1/apps/${created.app_id}/collections/notes/c`, { key: o.key, method: "DELETE" }), 200);
    const detail = await json<{ row_count: number; storage_bytes: string }>(await call(`/v1/apps/${created.app_id}`, { key: o.key }), 200);
    expect(detail.row_count).toBe(2);
    expect(Number(detail.storage_bytes)).toBeGreaterThan(0);
  });

  it("unknown → 404 app_not_found; deleted → 410 soft_deleted unless include_deleted=true", async () => {
    const o = await owner();
    const created = await deploy(o.key);
    const e = await expectError(await call("/v1/apps/anything-at-all", { key: o.key }), 404, "app_not_found");
    expect(e.details).toEqual({ app: "anything-at-all" });
    const gone = await json<{ deleted_at: string }>(await del(o, created.app_id), 200);
    const soft = await expectError(await call(`/v1/apps/${created.app_id}`, { key: o.key }), 410, "soft_deleted");
    expect(soft.details).toEqual({ app_id: created.app_id, deleted_at: gone.deleted_at });
    await expectError(await call(`/v1/apps/${created.app_id}?include_deleted=false`, { key: o.key }), 410, "soft_deleted");
    const detail = await json<Record<string, unknown>>(await call(`/v1/apps/${created.app_id}?include_deleted=true`, { key: o.key }), 200);
    expect(detail).toMatchObject({ status: "deleted", deleted_at: gone.deleted_at, current_version: 1, row_count: 0, storage_bytes: "0" });
    await expectError(await call(`/v1/apps/${created.app_id}?include_deleted=yes`, { key: o.key }), 400, "invalid_request");
    await expectError(await call(`/v1/apps/${created.app_id}/document`, { key: o.key }), 410, "soft_deleted");
  });
});

describe("PATCH", () => {
  it("into link mints a share_url once; staying link mints nothing; leaving link clears the token", async () => {
    const o = await owner();
    const created = await deploy(o.key);
    const into = await json<Record<string, unknown>>(await patch(o, created.app_id, { visibility: "link" }), 200);
    expect(Object.keys(into).sort()).toEqual(["id", "share_url", "timezone", "visibility"]);
    expect(into).toMatchObject({ id: created.app_id, visibility: "link", timezone: null });
    expect(into.share_url).toMatch(new RegExp(`^http://${created.slug}\\.localhost:8787/#k=[0-9a-f]{32}$`));
    // The slug does not change with the visibility.
    let detail = await json<Summary>(await call(`/v1/apps/${created.app_id}`, { key: o.key }), 200);
    expect(detail).toMatchObject({ slug: created.slug, visibility: "link", has_share_token: true });
    const hash = (await env.DB.prepare("SELECT share_token_hash AS h FROM apps WHERE id = ?1").bind(created.app_id).first<{ h: string }>())!.h;

    const again = await json(await patch(o, created.app_id, { visibility: "link" }), 200);
    expect(again).toEqual({ id: created.app_id, visibility: "link", timezone: null });
    expect((await env.DB.prepare("SELECT share_token_hash AS h FROM apps WHERE id = ?1").bind(created.app_id).first<{ h: string }>())!.h).toBe(hash);

    const out = await json(await patch(o, created.app_id, { visibility: "public" }), 200);
    expect(out).toEqual({ id: created.app_id, visibility: "public", timezone: null });
    detail = await json<Summary>(await call(`/v1/apps/${created.app_id}`, { key: o.key }), 200);
    expect(detail).toMatchObject({ visibility: "public", has_share_token: false });
    expect(await json(await patch(o, created.app_id, { visibility: "private" }), 200)).toEqual({ id: created.app_id, visibility: "private", timezone: null });
    // Back into link: a fresh token.
    const back = await json<{ share_url: string }>(await patch(o, created.app_id, { visibility: "link" }), 200);
    expect(back.share_url).not.toBe(into.share_url);
  });

  it("timezone: an IANA name is stored; null clears it; both fields at once", async () => {
    const o = await owner();
    const created = await deploy(o.key);
    expect(await json(await patch(o, created.app_id, { timezone: "Europe/Paris" }), 200)).toEqual({ id: created.app_id, visibility: "private", timezone: "Europe/Paris" });
    expect((await json<{ timezone: string }>(await call(`/v1/apps/${created.app_id}`, { key: o.key }), 200)).timezone).toBe("Europe/Paris");
    expect(await json(await patch(o, created.app_id, { timezone: "America/Argentina/Buenos_Aires" }), 200)).toMatchObject({ timezone: "America/Argentina/Buenos_Aires" });
    expect(await json(await patch(o, created.app_id, { timezone: "UTC" }), 200)).toMatchObject({ timezone: "UTC" });
    expect(await json(await patch(o, created.app_id, { timezone: null }), 200)).toEqual({ id: created.app_id, visibility: "private", timezone: null });
    const both = await json<Record<string, unknown>>(await patch(o, created.app_id, { visibility: "link", timezone: "Asia/Tokyo" }), 200);
    expect(both).toMatchObject({ visibility: "link", timezone: "Asia/Tokyo", share_url: expect.stringContaining("#k=") });
  });

  it.each([
    ["an unknown zone", { timezone: "Mars/Olympus" }, "timezone"],
    ["an empty zone", { timezone: "" }, "timezone"],
    ["a blank zone", { timezone: "  " }, "timezone"],
    ["a UTC offset", { timezone: "+01:00" }, "timezone"],
    ["a zone of the wrong type", { timezone: 1 }, "timezone"],
    ["an unknown visibility", { visibility: "secret" }, "visibility"],
    ["an empty body", {}, "body"],
    ["only unknown fields", { slug: "new-slug" }, "slug"],
    ["an unknown field beside a good one", { visibility: "public", status: "active" }, "status"],
  ])("%s → 400 invalid_request; nothing changes", async (_name, body, field) => {
    const o = await owner();
    const created = await deploy(o.key);
    await unchanged(o, created.app_id, async () => {
      const e = await expectError(await patch(o, created.app_id, body), 400, "invalid_request");
      expect(e.details?.field).toBe(field);
    });
  });

  it("with the owner's session cookie: needs the relay's Origin (CSRF); the agent key needs none", async () => {
    const o = await owner();
    const created = await deploy(o.key);
    await unchanged(o, created.app_id, async () => {
      for (const origin of [null, "https://evil.example.com", "http://localhost:8787.evil.example.com", "null"]) {
        const res = await call(`/v1/apps/${created.app_id}`, { session: o.human.session, origin, method: "PATCH", json: { visibility: "public" } });
        await expectError(res, 403, "csrf_origin_mismatch");
      }
      const res = await call(`/v1/apps/${created.app_id}`, { session: o.human.session, origin: null, referer: "https://evil.example.com/x", method: "PATCH", json: { visibility: "public" } });
      await expectError(res, 403, "csrf_origin_mismatch");
      await expectError(await call(`/v1/apps/${created.app_id}`, { session: o.human.session, origin: null, method: "DELETE" }), 403, "csrf_origin_mismatch");
      await expectError(await call(`/v1/apps/${created.app_id}/purge`, { session: o.human.session, origin: null, method: "POST" }), 403, "csrf_origin_mismatch");
    });
    expect(await json(await call(`/v1/apps/${created.app_id}`, { session: o.human.session, method: "PATCH", json: { visibility: "public" } }), 200))
      .toMatchObject({ visibility: "public" });
    expect(await json(await call(`/v1/apps/${created.app_id}`, { session: o.human.session, origin: null, referer: "http://localhost:8787/console", method: "PATCH", json: { visibility: "private" } }), 200))
      .toMatchObject({ visibility: "private" });
    expect(await json(await patch(o, created.app_id, { visibility: "public" }), 200)).toMatchObject({ visibility: "public" });
  });

  it("a visibility the live manifest cannot stand is refused with the compiler's error (push needs a public app)", async () => {
    const o = await owner();
    const push = { NOTIFY_PUSH_ENABLED: "true" };
    const manifest = manifestWith({ notes: notesCollection() }, {
      offline: true, notify: [{ on: "create", collection: "notes", to: ["owner"], subject: "New", body: "{{text}}", channels: ["push"] }],
    });
    const res = await callWith(push, "/v1/apps", { key: o.key, json: { html: "<p>x</p>", manifest, visibility: "public", slug: `push-${crypto.randomUUID().slice(0, 8)}` } });
    const created = await json<Created>(res, 201);
    for (const visibility of ["private", "link"]) {
      await unchanged(o, created.app_id, async () => {
        const e = await expectError(await callWith(push, `/v1/apps/${created.app_id}`, { key: o.key, method: "PATCH", json: { visibility } }), 400, "notify_channel_not_enabled");
        expect(e.details?.path).toBe("x-service-manifest.notify[0].channels[0]");
      });
    }
    // A timezone change alone is fine.
    expect(await json(await callWith(push, `/v1/apps/${created.app_id}`, { key: o.key, method: "PATCH", json: { timezone: "Europe/Paris" } }), 200)).toMatchObject({ visibility: "public" });
  });

  it("a deleted app → 410 soft_deleted", async () => {
    const o = await owner();
    const created = await deploy(o.key);
    await json(await del(o, created.app_id), 200);
    await expectError(await patch(o, created.app_id, { visibility: "public" }), 410, "soft_deleted");
    expect((await env.DB.prepare("SELECT visibility FROM apps WHERE id = ?1").bind(created.app_id).first<{ visibility: string }>())!.visibility).toBe("private");
  });
});

describe("share-link rotate", () => {
  it("a link app gets a new URL and a new token hash each time", async () => {
    const o = await owner();
    const created = await deploy(o.key, { visibility: "link" });
    const hashOf = async () => (await env.DB.prepare("SELECT share_token_hash AS h FROM apps WHERE id = ?1").bind(created.app_id).first<{ h: string }>())!.h;
    const h0 = await hashOf();
    const r1 = await json<{ share_url: string }>(await post(o, created.app_id, "share-link/rotate", {}), 200);
    expect(Object.keys(r1)).toEqual(["share_url"]);
    expect(r1.share_url).toMatch(new RegExp(`^${created.url.replace(/\./g, "\\.")}#k=[0-9a-f]{32}$`));
    expect(r1.share_url).not.toBe(created.share_url);
    const h1 = await hashOf();
    expect(h1).not.toBe(h0);
    const r2 = await json<{ share_url: string }>(await post(o, created.app_id, "share-link/rotate"), 200);
    expect(r2.share_url).not.toBe(r1.share_url);
    expect(await hashOf()).not.toBe(h1);
  });

  it("a link app without a token gets one", async () => {
    const o = await owner();
    const created = await deploy(o.key, { visibility: "link" });
    await env.DB.prepare("UPDATE apps SET share_token_hash = NULL WHERE id = ?1").bind(created.app_id).run();
    const r = await json<{ share_url: string }>(await post(o, created.app_id, "share-link/rotate", {}), 200);
    expect(r.share_url).toContain("#k=");
    expect((await json<Summary>(await call(`/v1/apps/${created.app_id}`, { key: o.key }), 200)).has_share_token).toBe(true);
  });

  it("a private or public app → 409 conflict; a body with fields → 400; a deleted app → 410", async () => {
    const o = await owner();
    for (const visibility of ["private", "public"]) {
      const created = await deploy(o.key, { visibility });
      await unchanged(o, created.app_id, async () => {
        const e = await expectError(await post(o, created.app_id, "share-link/rotate", {}), 409, "conflict");
        expect(e.details).toEqual({ visibility });
      });
    }
    const link = await deploy(o.key, { visibility: "link" });
    await unchanged(o, link.app_id, async () => {
      expect((await expectError(await post(o, link.app_id, "share-link/rotate", { token: "x" }), 400, "invalid_request")).details?.field).toBe("token");
    });
    await json(await del(o, link.app_id), 200);
    await expectError(await post(o, link.app_id, "share-link/rotate", {}), 410, "soft_deleted");
  });
});

describe("delete, restore, purge", () => {
  it("DELETE is idempotent: status deleted, deleted_at, purge_after 30 days later", async () => {
    const o = await owner();
    const created = await deploy(o.key);
    const first = await json<Record<string, string>>(await del(o, created.app_id), 200);
    expect(Object.keys(first).sort()).toEqual(["deleted_at", "id", "purge_after", "status"]);
    expect(first).toMatchObject({ id: created.app_id, status: "deleted" });
    expect(first.deleted_at).toMatch(ISO);
    expect(Date.parse(first.purge_after) - Date.parse(first.deleted_at)).toBe(30 * 86_400_000);
    const second = await json(await del(o, created.app_id), 200);
    expect(second).toEqual(first);
    const row = await env.DB.prepare("SELECT status, status_before_delete, deleted_at, current_version FROM apps WHERE id = ?1").bind(created.app_id).first();
    expect(row).toEqual({ status: "deleted", status_before_delete: "active", deleted_at: first.deleted_at, current_version: 1 });
    // The version and document are kept.
    expect(await count("app_versions", "app_id = ?1", created.app_id)).toBe(1);
  });

  it("restore brings the app back as it was, returns AppDetail, and is idempotent on a live app", async () => {
    const o = await owner();
    const created = await deploy(o.key, { visibility: "link" });
    await setStatus(created.app_id, "dormant");
    await json(await del(o, created.app_id), 200);
    const restored = await json<Record<string, unknown>>(await post(o, created.app_id, "restore"), 200);
    expect(Object.keys(restored).sort()).toEqual(DETAIL_KEYS);
    expect(restored).toMatchObject({ id: created.app_id, status: "dormant", deleted_at: null, current_version: 1, visibility: "link", has_share_token: true, manifest: MANIFEST });
    const again = await json(await post(o, created.app_id, "restore", {}), 200);
    expect(again).toEqual(restored);
    expect((await appState(created.app_id, o.key)).html).toBe("<h1>v1</h1>");
    expect((await env.DB.prepare("SELECT status_before_delete AS s FROM apps WHERE id = ?1").bind(created.app_id).first<{ s: string | null }>())!.s).toBeNull();
  });

  it("restore at the app cap → 409 account_quota_exceeded; the app stays in the trash", async () => {
    const o = await owner();
    const capped = { MAX_APPS_PER_ACCOUNT: "2" };
    const a = await deploy(o.key);
    await json(await del(o, a.app_id), 200);
    await deploy(o.key);
    await deploy(o.key);
    await unchanged(o, a.app_id, async () => {
      const e = await expectError(await callWith(capped, `/v1/apps/${a.app_id}/restore`, { key: o.key, method: "POST" }), 409, "account_quota_exceeded");
      expect(e.details).toEqual({ limit: 2, resource: "apps" });
    });
    expect((await env.DB.prepare("SELECT status FROM apps WHERE id = ?1").bind(a.app_id).first<{ status: string }>())!.status).toBe("deleted");
    // Under a higher cap it comes back.
    expect(await json(await callWith({ MAX_APPS_PER_ACCOUNT: "3" }, `/v1/apps/${a.app_id}/restore`, { key: o.key, method: "POST" }), 200)).toMatchObject({ status: "active" });
  });

  it("concurrent restores cannot pass the cap together; a restore racing itself stays idempotent", async () => {
    const o = await owner();
    const apps = [await deploy(o.key), await deploy(o.key), await deploy(o.key)];
    for (const a of apps) await json(await del(o, a.app_id), 200);
    await deploy(o.key);
    const capped = { MAX_APPS_PER_ACCOUNT: "2" };
    const responses = await Promise.all(apps.map((a) => callWith(capped, `/v1/apps/${a.app_id}/restore`, { key: o.key, method: "POST" })));
    expect(responses.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    for (const r of responses) {
      if (r.status === 409) await expectError(r, 409, "account_quota_exceeded");
      else await r.arrayBuffer();
    }
    expect(await count("apps", "owner_human_id = ?1 AND status != 'deleted'", o.human.humanId)).toBe(2);
    // The same app restored twice at once: both answer its detail.
    const fresh = await owner();
    const one = await deploy(fresh.key);
    await json(await del(fresh, one.app_id), 200);
    const twice = await Promise.all([0, 1].map(() => post(fresh, one.app_id, "restore")));
    for (const r of twice) expect((await json<{ status: string }>(r, 200)).status).toBe("active");
  });

  it("purge: only a deleted app (else 409 conflict); afterwards 404 everywhere and its D1 rows are gone", async () => {
    const o = await owner();
    const created = await deploy(o.key);
    await redeploy(o.key, created.app_id, { html: "<p>v2</p>" });
    await unchanged(o, created.app_id, async () => {
      const e = await expectError(await post(o, created.app_id, "purge"), 409, "conflict");
      expect(e.details).toEqual({ status: "active" });
    });
    await json(await del(o, created.app_id), 200);
    expect(await json(await post(o, created.app_id, "purge", {}), 200)).toEqual({ id: created.app_id, purged: true });
    expect(await count("apps", "id = ?1", created.app_id)).toBe(0);
    expect(await count("app_versions", "app_id = ?1", created.app_id)).toBe(0);
    for (const [method, path] of [["GET", ""], ["GET", "?include_deleted=true"], ["DELETE", ""], ["POST", "/restore"], ["POST", "/purge"], ["GET", "/document"]] as const) {
      const url = path.startsWith("?") ? `/v1/apps/${created.app_id}${path}` : `/v1/apps/${created.app_id}${path}`;
      await expectError(await call(url, { key: o.key, method }), 404, "app_not_found");
    }
    expect((await json<Page>(await list(o, "?status=all"), 200)).items).toEqual([]);
    // The slug is free again.
    expect((await deploy(o.key, { slug: created.slug })).slug).toBe(created.slug);
  });

  it("purge destroys the app's store", async () => {
    const o = await owner();
    const created = await deploy(o.key);
    await json(await call(`/v1/apps/${created.app_id}/collections/notes`, { key: o.key, json: { data: { text: "kept until purge" } } }), 201);
    await json(await del(o, created.app_id), 200);
    const stub = env.APP_STORE.get(env.APP_STORE.idFromName(created.app_id));
    expect((await stub.usage()).rowCount).toBe(1);
    // Restoring keeps the rows.
    await json(await post(o, created.app_id, "restore"), 200);
    expect((await json<{ row_count: number }>(await call(`/v1/apps/${created.app_id}`, { key: o.key }), 200)).row_count).toBe(1);
    await json(await del(o, created.app_id), 200);
    await json(await post(o, created.app_id, "purge"), 200);
    await runInDurableObject(stub, async (_i, state) => {
      expect(state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf%' ESCAPE '\\'").toArray()).toEqual([]);
    });
  });
});

describe("wake", () => {
  it("a no-op on an active app; a dormant app becomes active", async () => {
    const o = await owner();
    const created = await deploy(o.key);
    const before = await appState(created.app_id, o.key);
    expect(await json(await post(o, created.app_id, "wake"), 200)).toEqual({ id: created.app_id, status: "active" });
    expect(await appState(created.app_id, o.key)).toEqual(before);
    await setStatus(created.app_id, "dormant");
    expect(await json(await post(o, created.app_id, "wake", {}), 200)).toEqual({ id: created.app_id, status: "active" });
    expect((await json<Summary>(await call(`/v1/apps/${created.app_id}`, { key: o.key }), 200)).status).toBe("active");
    for (const status of ["archived", "suspended"]) {
      await setStatus(created.app_id, status);
      expect(await json(await post(o, created.app_id, "wake"), 200)).toEqual({ id: created.app_id, status });
    }
    await setStatus(created.app_id, "active");
    await json(await del(o, created.app_id), 200);
    await expectError(await post(o, created.app_id, "wake"), 410, "soft_deleted");
  });
});

describe("advisories", () => {
  interface Advisories {
    apps_scanned: number;
    apps_affected: number;
    counts: { high: number; medium: number; low: number };
    truncated: boolean;
    items: Array<{ app_id: string; slug: string; visibility: string; status: string; current_version: number | null; highest_severity: string; advisories: Array<{ code: string; collection: string; severity: string; message: string }> }>;
  }

  it("a public app readable by anyone is high world_readable; link is medium; private is not flagged; worst first", async () => {
    const o = await owner();
    const pub = await deploy(o.key, { visibility: "public", manifest: WORLD_READABLE, slug: `adv-${crypto.randomUUID().slice(0, 8)}` });
    const link = await deploy(o.key, { visibility: "link", manifest: WORLD_READABLE });
    await deploy(o.key, { visibility: "private", manifest: WORLD_READABLE });
    const counting = await deploy(o.key, { manifest: manifestWith({ notes: notesCollection({ countRead: ["anyone"] }) }) });
    await deploy(o.key);
    const body = await json<Advisories>(await call("/v1/apps/advisories", { key: o.key }), 200);
    expect(Object.keys(body).sort()).toEqual(["apps_affected", "apps_scanned", "counts", "items", "truncated"]);
    expect(body).toMatchObject({ apps_scanned: 5, apps_affected: 3, counts: { high: 1, medium: 1, low: 1 }, truncated: false });
    expect(body.items.map((i) => [i.app_id, i.highest_severity])).toEqual([[pub.app_id, "high"], [link.app_id, "medium"], [counting.app_id, "low"]]);
    const first = body.items[0];
    expect(Object.keys(first).sort()).toEqual(["advisories", "app_id", "current_version", "highest_severity", "slug", "status", "visibility"]);
    expect(first).toMatchObject({ slug: pub.slug, visibility: "public", status: "active", current_version: 1 });
    expect(first.advisories).toEqual([{ code: "world_readable", collection: "notes", severity: "high", message: expect.stringContaining("notes") }]);
    expect(body.items[2].advisories.map((a) => a.code)).toEqual(["count_wider_than_read"]);
  });

  it("severity filters the items; counts still cover the whole audit", async () => {
    const o = await owner();
    const pub = await deploy(o.key, { visibility: "public", manifest: WORLD_READABLE, slug: `sev-${crypto.randomUUID().slice(0, 8)}` });
    await deploy(o.key, { visibility: "link", manifest: WORLD_READABLE });
    const high = await json<Advisories>(await call("/v1/apps/advisories?severity=high", { key: o.key }), 200);
    expect(high).toMatchObject({ apps_scanned: 2, apps_affected: 1, counts: { high: 1, medium: 1, low: 0 } });
    expect(high.items.map((i) => i.app_id)).toEqual([pub.app_id]);
    const low = await json<Advisories>(await call("/v1/apps/advisories?severity=low", { key: o.key }), 200);
    expect(low).toMatchObject({ apps_affected: 0, items: [], counts: { high: 1, medium: 1, low: 0 } });
    await expectError(await call("/v1/apps/advisories?severity=urgent", { key: o.key }), 400, "invalid_request");
  });

  it("follows the live version; deleted apps and other owners' apps are not scanned; works with the owner's session", async () => {
    const o = await owner();
    const stranger = await owner();
    await deploy(stranger.key, { visibility: "public", manifest: WORLD_READABLE, slug: `str-${crypto.randomUUID().slice(0, 8)}` });
    const pub = await deploy(o.key, { visibility: "public", manifest: WORLD_READABLE, slug: `fol-${crypto.randomUUID().slice(0, 8)}` });
    const other = await deploy(o.key, { visibility: "link", manifest: WORLD_READABLE });
    await json(await del(o, other.app_id), 200);
    let body = await json<Advisories>(await call("/v1/apps/advisories", { session: o.human.session }), 200);
    expect(body).toMatchObject({ apps_scanned: 1, apps_affected: 1, counts: { high: 1, medium: 0, low: 0 } });
    await redeploy(o.key, pub.app_id, { manifest: MANIFEST });
    body = await json<Advisories>(await call("/v1/apps/advisories", { key: o.key }), 200);
    expect(body).toEqual({ apps_scanned: 1, apps_affected: 0, counts: { high: 0, medium: 0, low: 0 }, truncated: false, items: [] });
    await expectError(await call("/v1/apps/advisories"), 401, "unauthorized");
  });
});

describe("disclosure", () => {
  it("what the live manifest declares", async () => {
    const o = await owner();
    const created = await deploy(o.key, {
      visibility: "public", slug: `dis-${crypto.randomUUID().slice(0, 8)}`,
      manifest: manifestWith({ notes: notesCollection({ read: ["anyone"] }) }, { externalHosts: ["https://api.example.com"], capabilities: ["camera"] }),
    });
    const body = await json<Record<string, unknown>>(await call(`/v1/apps/${created.app_id}/disclosure`, { key: o.key }), 200);
    expect(Object.keys(body).sort()).toEqual([
      "agent_tasks", "app", "app_id", "capabilities", "cdn", "collections", "embed_ancestors", "embeds", "external_hosts", "ingest_hooks",
      "is_empty", "lines", "notify", "offline", "routes", "version", "webhook_rules", "webhook_targets",
    ]);
    expect(body).toMatchObject({
      app_id: created.app_id, version: 1, app: { name: "Notes", description: null, icon: null },
      external_hosts: ["https://api.example.com"], capabilities: ["camera"], cdn: false, offline: false, is_empty: false,
      collections: [{ name: "notes", read: ["anyone"], write: ["owner"], update: ["owner"], delete: ["owner"], count_read: null, append_only: false }],
    });
    expect((body.lines as string[]).length).toBeGreaterThan(0);
    const bySession = await json(await call(`/v1/apps/${created.slug}/disclosure`, { session: o.human.session }), 200);
    expect(bySession).toEqual(body);
    await json(await del(o, created.app_id), 200);
    await expectError(await call(`/v1/apps/${created.app_id}/disclosure`, { key: o.key }), 410, "soft_deleted");
  });
});
