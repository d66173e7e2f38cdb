// One row at a time (WIRE §2.3, §2.14; spec A row states; CONTRACT §6): get, PATCH with
// if_match, soft delete, the deleted list, restore within 30 days, and purge. Every refusal
// is checked for status, code and details, and for leaving the store untouched.
import { describe, expect, it, vi } from "vitest";
import { expectError, json } from "../helpers";
import { days, DELETED_KEYS, FEED_KEYS, ISO, ROW_KEYS, setup, type Ctx, type DeletedRow, type Row } from "./fixtures";
import { clockPast } from "../../support/wait";

vi.setConfig({ testTimeout: 30_000 });

function patch(ctx: Ctx, collection: string, key: string, body: unknown, who: "agent" | "owner" = "agent"): Promise<Response> {
  return ctx.as(who)(ctx.path(collection, `/${encodeURIComponent(key)}`), { method: "PATCH", json: body });
}

function del(ctx: Ctx, collection: string, key: string, body?: unknown, who: "agent" | "owner" = "agent"): Promise<Response> {
  return ctx.as(who)(ctx.path(collection, `/${encodeURIComponent(key)}`), { method: "DELETE", ...(body === undefined ? {} : { json: body }) });
}

function restore(ctx: Ctx, collection: string, key: string, who: "agent" | "owner" = "agent"): Promise<Response> {
  return ctx.as(who)(ctx.path(collection, `/${encodeURIComponent(key)}/restore`), { method: "POST" });
}

function purge(ctx: Ctx, collection: string, key: string, who: "agent" | "owner" = "agent"): Promise<Response> {
  return ctx.as(who)(ctx.path(collection, `/${encodeURIComponent(key)}/purge`), { method: "DELETE" });
}

async function deletedList(ctx: Ctx, collection: string, query = "", who: "agent" | "owner" = "agent"): Promise<{ rows: DeletedRow[]; next_before: string | null }> {
  return json(await ctx.as(who)(ctx.path(collection, `/deleted${query}`)), 200);
}


describe("get", () => {
  it("answers { row } for a live row; 404 row_not_found for a missing, deleted or purged one", async () => {
    const ctx = await setup();
    const row = await ctx.create("tasks", { title: "a" }, { key: "user@example.com" });
    const body = await json<{ row: Row }>(await ctx.agentCall(ctx.path("tasks", "/user@example.com")), 200);
    expect(Object.keys(body)).toEqual(["row"]);
    expect(Object.keys(body.row).sort()).toEqual(ROW_KEYS);
    expect(body.row).toEqual(row);
    expect(await ctx.get("tasks", row.key, "owner")).toEqual(row);
    const missing = await expectError(await ctx.agentCall(ctx.path("tasks", "/nope")), 404, "row_not_found");
    expect(missing.details).toBeUndefined();
    await ctx.remove("tasks", row.key);
    const deleted = await expectError(await ctx.agentCall(ctx.path("tasks", `/${row.key}`)), 404, "row_not_found");
    expect(deleted).toEqual(missing);
    await json(await purge(ctx, "tasks", row.key), 200);
    expect(await expectError(await ctx.agentCall(ctx.path("tasks", `/${row.key}`)), 404, "row_not_found")).toEqual(missing);
    // A key that exists in another collection is not found here.
    await ctx.create("free", {}, { key: "k1" });
    await expectError(await ctx.agentCall(ctx.path("tasks", "/k1")), 404, "row_not_found");
  });
});

describe("update (PATCH)", () => {
  it("replaces data, bumps the version, stamps the editor and keeps the creator", async () => {
    const ctx = await setup();
    const row = await ctx.create("tasks", { title: "a", n: 1, tags: ["x"] });
    // The edit in a later millisecond than the create, so updated_at must move forward.
    await clockPast(Date.parse(row.updated_at));
    const v2 = await ctx.update("tasks", row.key, { title: "b" }, {}, "owner");
    expect(v2).toEqual({
      ...row, data: { title: "b" }, version: 2, author: ctx.humanAuthor, editor: ctx.humanAuthor, creator: ctx.agentAuthor,
      updated_at: v2.updated_at,
    });
    expect(v2.updated_at).toMatch(ISO);
    expect(v2.updated_at > row.updated_at).toBe(true);
    const v3 = await ctx.update("tasks", row.key, { title: "c", n: 3 });
    expect(v3).toMatchObject({ version: 3, author: ctx.agentAuthor, editor: ctx.agentAuthor, creator: ctx.agentAuthor, data: { title: "c", n: 3 } });
    expect(await ctx.get("tasks", row.key)).toEqual(v3);
    // The same data again is still a write.
    expect((await ctx.update("tasks", row.key, { title: "c", n: 3 })).version).toBe(4);
    const feed = await ctx.feedAll();
    expect(feed.map((e) => [e.op, e.row_version, e.author.kind])).toEqual([["create", 1, "agent"], ["update", 2, "human"], ["update", 3, "agent"], ["update", 4, "agent"]]);
  });

  it("if_match: the version read → 200; stale → 409 conflict with details.current = the row now", async () => {
    const ctx = await setup();
    const row = await ctx.create("tasks", { title: "a" });
    const v2 = await ctx.update("tasks", row.key, { title: "b" }, { if_match: 1 });
    expect(v2.version).toBe(2);
    for (const stale of [1, 0, 3, 999]) {
      const e = await ctx.unchanged(async () => expectError(await patch(ctx, "tasks", row.key, { data: { title: "x" }, if_match: stale }), 409, "conflict"));
      expect(e.details).toEqual({ current: v2 });
    }
    // The conflict body's current row can be rebased on directly.
    expect((await ctx.update("tasks", row.key, { title: "c" }, { if_match: v2.version })).version).toBe(3);
  });

  it("malformed if_match, missing data, unknown keys or a bad body → 400 invalid_request, nothing changed", async () => {
    const ctx = await setup();
    const row = await ctx.create("tasks", { title: "a" });
    for (const if_match of ["1", -1, 1.5, null, true, {}, [1], "abc", 1e300]) {
      const e = await ctx.unchanged(async () => expectError(await patch(ctx, "tasks", row.key, { data: { title: "x" }, if_match }), 400, "invalid_request"));
      expect(e.details?.field).toBe("if_match");
    }
    let e = await ctx.unchanged(async () => expectError(await patch(ctx, "tasks", row.key, { if_match: 1 }), 400, "invalid_request"));
    expect(e.details?.field).toBe("data");
    e = await ctx.unchanged(async () => expectError(await patch(ctx, "tasks", row.key, { data: { title: "x" }, version: 1 }), 400, "invalid_request"));
    expect(e.details?.field).toBe("version");
    for (const body of [null, [], "x"]) await ctx.unchanged(async () => expectError(await patch(ctx, "tasks", row.key, body), 400, "invalid_request"));
    await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.path("tasks", `/${row.key}`), { method: "PATCH" }), 400, "invalid_request"));
  });

  it("a missing or deleted row → 404 row_not_found (if_match or not)", async () => {
    const ctx = await setup();
    await ctx.unchanged(async () => expectError(await patch(ctx, "tasks", "nope", { data: { title: "x" } }), 404, "row_not_found"));
    const row = await ctx.create("tasks", { title: "a" });
    await ctx.remove("tasks", row.key);
    await ctx.unchanged(async () => expectError(await patch(ctx, "tasks", row.key, { data: { title: "x" } }), 404, "row_not_found"));
    await ctx.unchanged(async () => expectError(await patch(ctx, "tasks", row.key, { data: { title: "x" }, if_match: 1 }), 404, "row_not_found"));
    await ctx.unchanged(async () => expectError(await patch(ctx, "nope", row.key, { data: { title: "x" } }), 404, "collection_not_found"));
  });

  it("appendOnly → 403 append_only on update and delete (if_match first or not); { except: [owner] } lets owner-level callers", async () => {
    const ctx = await setup();
    const row = await ctx.create("logs", { line: 1 });
    for (const who of ["agent", "owner"] as const) {
      const e = await ctx.unchanged(async () => expectError(await patch(ctx, "logs", row.key, { data: { line: 2 } }, who), 403, "append_only"));
      expect(e.details).toEqual({ collection: "logs" });
      await ctx.unchanged(async () => expectError(await patch(ctx, "logs", row.key, { data: { line: 2 }, if_match: 7 }, who), 403, "append_only"));
      await ctx.unchanged(async () => expectError(await del(ctx, "logs", row.key, undefined, who), 403, "append_only"));
      await ctx.unchanged(async () => expectError(await del(ctx, "logs", row.key, { if_match: 1 }, who), 403, "append_only"));
    }
    // A missing row is still row_not_found, not append_only.
    await ctx.unchanged(async () => expectError(await patch(ctx, "logs", "nope", { data: {} }), 404, "row_not_found"));
    const x = await ctx.create("logsx", { line: 1 });
    expect((await ctx.update("logsx", x.key, { line: 2 })).version).toBe(2);
    expect((await ctx.update("logsx", x.key, { line: 3 }, {}, "owner")).version).toBe(3);
    await ctx.remove("logsx", x.key, "owner");
  });
});

describe("delete", () => {
  it("soft-deletes: { deleted: true, key }; the row reads as absent; a delete entry carries the last data", async () => {
    const ctx = await setup();
    const row = await ctx.create("tasks", { title: "a", email: "a@x.io" });
    await ctx.update("tasks", row.key, { title: "b", email: "a@x.io" });
    const res = await del(ctx, "tasks", row.key);
    expect(await json(res, 200)).toEqual({ deleted: true, key: row.key });
    await expectError(await ctx.agentCall(ctx.path("tasks", `/${row.key}`)), 404, "row_not_found");
    expect((await ctx.list("tasks")).rows).toEqual([]);
    expect(await json(await ctx.agentCall(ctx.path("tasks", "/count")), 200)).toEqual({ count: 0 });
    const last = (await ctx.feedAll()).at(-1)!;
    expect(last).toMatchObject({ op: "delete", row_key: row.key, row_version: 2, data: { title: "b", email: "a@x.io" }, author: ctx.agentAuthor });
    expect(Object.keys(last).sort()).toEqual(FEED_KEYS);
    // Again: 404.
    await ctx.unchanged(async () => expectError(await del(ctx, "tasks", row.key), 404, "row_not_found"));
    await ctx.unchanged(async () => expectError(await del(ctx, "tasks", "never"), 404, "row_not_found"));
  });

  it("if_match: stale → 409 conflict with details.current; right → 200; malformed → 400", async () => {
    const ctx = await setup();
    const row = await ctx.create("tasks", { title: "a" });
    const v2 = await ctx.update("tasks", row.key, { title: "b" });
    const e = await ctx.unchanged(async () => expectError(await del(ctx, "tasks", row.key, { if_match: 1 }), 409, "conflict"));
    expect(e.details).toEqual({ current: v2 });
    for (const if_match of ["2", -1, 2.5, null]) {
      const bad = await ctx.unchanged(async () => expectError(await del(ctx, "tasks", row.key, { if_match }), 400, "invalid_request"));
      expect(bad.details?.field).toBe("if_match");
    }
    await ctx.unchanged(async () => expectError(await del(ctx, "tasks", row.key, { if_match: 2, force: true }), 400, "invalid_request"));
    await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.path("tasks", `/${row.key}`), { method: "DELETE", body: "nope", contentType: "application/json" }), 400, "invalid_request"));
    expect(await json(await del(ctx, "tasks", row.key, { if_match: 2 }), 200)).toEqual({ deleted: true, key: row.key });
    // An empty JSON object is no condition.
    const other = await ctx.create("tasks", { title: "o" });
    expect(await json(await del(ctx, "tasks", other.key, {}), 200)).toEqual({ deleted: true, key: other.key });
  });
});

describe("deleted list", () => {
  it("DeletedRow shape, newest deletion first; author is who deleted it; purged and restored rows leave", async () => {
    const ctx = await setup();
    const a = await ctx.create("tasks", { title: "a" });
    const b = await ctx.create("tasks", { title: "b" }, {}, "owner");
    const c = await ctx.create("tasks", { title: "c" });
    // Each deletion in a later millisecond, so "newest deletion first" is one order.
    await ctx.remove("tasks", a.key, "owner");
    await clockPast();
    await ctx.remove("tasks", b.key);
    await clockPast();
    await ctx.remove("tasks", c.key);
    const list = await deletedList(ctx, "tasks");
    expect(Object.keys(list).sort()).toEqual(["next_before", "rows"]);
    expect(list.next_before).toBeNull();
    expect(list.rows.map((r) => r.key)).toEqual([c.key, b.key, a.key]);
    for (const r of list.rows) {
      expect(Object.keys(r).sort()).toEqual(DELETED_KEYS);
      expect(r.deleted_at).toMatch(ISO);
      expect(r.recoverable_until).toBe(new Date(Date.parse(r.deleted_at) + days(30)).toISOString());
      expect(r.purged).toBe(false);
    }
    expect(list.rows[2]).toEqual({
      key: a.key, data: { title: "a" }, version: 1, author: ctx.humanAuthor, creator: ctx.agentAuthor, created_at: a.created_at,
      deleted_at: list.rows[2].deleted_at, recoverable_until: list.rows[2].recoverable_until, purged: false,
    });
    expect(list.rows[1]).toMatchObject({ author: ctx.agentAuthor, creator: ctx.humanAuthor });
    expect(await deletedList(ctx, "tasks", "", "owner")).toEqual(list);
    await json(await purge(ctx, "tasks", b.key), 200);
    await json(await restore(ctx, "tasks", c.key), 200);
    expect((await deletedList(ctx, "tasks")).rows.map((r) => r.key)).toEqual([a.key]);
    expect((await deletedList(ctx, "free")).rows).toEqual([]);
    await expectError(await ctx.agentCall(ctx.path("nope", "/deleted")), 404, "collection_not_found");
  });

  it("pages with limit and before = next_before, even through rows deleted in the same millisecond", async () => {
    const ctx = await setup();
    const keys: string[] = [];
    for (let i = 0; i < 12; i++) keys.push((await ctx.create("free", { i })).key);
    // A batch delete stamps many rows within the same millisecond.
    await json(await ctx.agentCall(ctx.path("free", "/batch"), { method: "DELETE", json: { keys: keys.slice(0, 8) } }), 200);
    for (const k of keys.slice(8)) await ctx.remove("free", k);
    const whole = (await deletedList(ctx, "free", "?limit=1000")).rows.map((r) => r.key);
    expect(new Set(whole)).toEqual(new Set(keys));
    expect(whole.slice(0, 4)).toEqual(keys.slice(8).reverse());
    for (const limit of [1, 3, 5]) {
      const seen: string[] = [];
      let before: string | null = null;
      for (let i = 0; i < 20; i++) {
        const page = await deletedList(ctx, "free", `?limit=${limit}${before ? `&before=${encodeURIComponent(before)}` : ""}`);
        expect(page.rows.length).toBeLessThanOrEqual(limit);
        seen.push(...page.rows.map((r) => r.key));
        before = page.next_before;
        if (before === null) break;
        expect(typeof before).toBe("string");
      }
      expect(seen).toEqual(whole);
    }
    // Default limit 100; a bare timestamp works as before; bad limits are refused.
    expect((await deletedList(ctx, "free")).rows).toHaveLength(12);
    expect((await deletedList(ctx, "free", `?before=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).rows).toHaveLength(12);
    expect((await deletedList(ctx, "free", "?before=2000-01-01T00:00:00.000Z")).rows).toEqual([]);
    for (const limit of ["0", "1001", "x", "-5", "2.5"]) {
      const e = await expectError(await ctx.agentCall(ctx.path("free", `/deleted?limit=${limit}`)), 400, "invalid_request");
      expect(e.details?.field).toBe("limit");
    }
    const e = await expectError(await ctx.agentCall(ctx.path("free", `/deleted?before=${"x".repeat(65)}`)), 400, "invalid_request");
    expect(e.details?.field).toBe("before");
    // Junk before values are just strings that sort somewhere: never a failure.
    for (const before of ["junk", "~", "~1", "2024~x", "x~99999999999999999"]) {
      await json(await ctx.agentCall(ctx.path("free", `/deleted?before=${encodeURIComponent(before)}`)), 200);
    }
    // A NUL is not text the relay takes anywhere (test/worker/hostile/unsafe-text.test.ts).
    const nul = await expectError(await ctx.agentCall(ctx.path("free", `/deleted?before=${encodeURIComponent("\u0000")}`)), 400, "invalid_request");
    expect(nul.details?.field).toBe("query");
  });
});

describe("restore", () => {
  it("brings the row back with its original data and creator, the version bumped, a create in the feed", async () => {
    const ctx = await setup();
    const row = await ctx.create("tasks", { title: "a", email: "a@x.io" });
    const v2 = await ctx.update("tasks", row.key, { title: "b", email: "a@x.io" });
    await ctx.remove("tasks", row.key, "owner");
    const head = await ctx.feedHead();
    const body = await json<{ row: Row }>(await restore(ctx, "tasks", row.key, "owner"), 200);
    expect(Object.keys(body)).toEqual(["row"]);
    expect(body.row).toEqual({
      ...v2, version: 3, author: ctx.humanAuthor, editor: ctx.humanAuthor, creator: ctx.agentAuthor, updated_at: body.row.updated_at, deleted_at: null,
    });
    expect(await ctx.get("tasks", row.key)).toEqual(body.row);
    const entries = (await ctx.feed(`since=${head}`)).entries;
    expect(entries).toEqual([{
      seq: head + 1, op: "create", collection_name: "tasks", row_key: row.key, row_version: 3, data: { title: "b", email: "a@x.io" },
      author: ctx.humanAuthor, ts: body.row.updated_at,
    }]);
    // Its unique value is held again.
    await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.path("tasks"), { json: { data: { title: "c", email: "A@x.io" } } }), 409, "unique_conflict"));
  });

  it("within 30 days only: 410 restore_expired after; a purged row is 410 too", async () => {
    const ctx = await setup();
    const young = await ctx.create("free", { n: 1 });
    const old = await ctx.create("free", { n: 2 });
    await ctx.remove("free", young.key);
    await ctx.remove("free", old.key);
    await ctx.setColumn("free", young.key, "deleted_at", new Date(Date.now() - days(29)).toISOString());
    const oldAt = new Date(Date.now() - days(30) - 60_000).toISOString();
    await ctx.setColumn("free", old.key, "deleted_at", oldAt);
    const e = await ctx.unchanged(async () => expectError(await restore(ctx, "free", old.key), 410, "restore_expired"));
    expect(e.details).toEqual({ key: old.key, deleted_at: oldAt });
    expect((await json<{ row: Row }>(await restore(ctx, "free", young.key), 200)).row.version).toBe(2);
    await json(await purge(ctx, "free", old.key), 200);
    const p = await ctx.unchanged(async () => expectError(await restore(ctx, "free", old.key), 410, "restore_expired"));
    expect(p.details).toEqual({ key: old.key });
  });

  it("a unique value taken meanwhile → 409 restore_conflict naming the field", async () => {
    const ctx = await setup();
    const row = await ctx.create("tasks", { title: "a", email: "a@x.io", handle: "h" });
    await ctx.remove("tasks", row.key);
    const taker = await ctx.create("tasks", { title: "b", handle: " H " });
    const e = await ctx.unchanged(async () => expectError(await restore(ctx, "tasks", row.key), 409, "restore_conflict"));
    expect(e.details).toEqual({ field: "handle", collection: "tasks" });
    await ctx.update("tasks", taker.key, { title: "b", handle: "other" });
    expect((await json<{ row: Row }>(await restore(ctx, "tasks", row.key), 200)).row.data).toEqual({ title: "a", email: "a@x.io", handle: "h" });
  });

  it("a live, missing or never-deleted row → 404 row_not_found; a body other than {} → 400", async () => {
    const ctx = await setup();
    const row = await ctx.create("tasks", { title: "a" });
    await ctx.unchanged(async () => expectError(await restore(ctx, "tasks", row.key), 404, "row_not_found"));
    await ctx.unchanged(async () => expectError(await restore(ctx, "tasks", "nope"), 404, "row_not_found"));
    await ctx.unchanged(async () => expectError(await restore(ctx, "nope", row.key), 404, "collection_not_found"));
    await ctx.remove("tasks", row.key);
    await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.path("tasks", `/${row.key}/restore`), { json: { force: true } }), 400, "invalid_request"));
    expect((await json<{ row: Row }>(await ctx.agentCall(ctx.path("tasks", `/${row.key}/restore`), { json: {} }), 200)).row.version).toBe(2);
  });
});

describe("purge", () => {
  it("a live row: scrubbed for good, out of every list, an audited delete with data null in the feed", async () => {
    const ctx = await setup();
    const row = await ctx.create("tasks", { title: "secret", email: "s@x.io" });
    await ctx.update("tasks", row.key, { title: "secret 2", email: "s@x.io" });
    const other = await ctx.create("tasks", { title: "other" });
    const head = await ctx.feedHead();
    expect(await json(await purge(ctx, "tasks", row.key, "owner"), 200)).toEqual({ purged: true, key: row.key });
    await expectError(await ctx.agentCall(ctx.path("tasks", `/${row.key}`)), 404, "row_not_found");
    expect((await deletedList(ctx, "tasks")).rows).toEqual([]);
    expect((await ctx.list("tasks")).rows.map((r) => r.key)).toEqual([other.key]);
    const stored = await ctx.sql((sql) => sql.exec("SELECT data, bytes, purged FROM _svc_rows WHERE key = ?", row.key).toArray());
    expect(stored).toEqual([{ data: "null", bytes: 0, purged: 1 }]);
    const entries = (await ctx.feed(`since=${head}`)).entries;
    expect(entries).toEqual([{
      seq: head + 1, op: "delete", collection_name: "tasks", row_key: row.key, row_version: 2, data: null, author: ctx.humanAuthor,
      ts: entries[0].ts, purged: true,
    }]);
    // No trace of the data is left in the feed either: the row's earlier entries read data null.
    const all = await ctx.feedAll();
    expect(all.map((e) => [e.row_key, e.op, e.data, e.purged ?? false])).toEqual([
      [row.key, "create", null, false], [row.key, "update", null, false], [other.key, "create", { title: "other" }, false], [row.key, "delete", null, true],
    ]);
    const raw = await ctx.sql((sql) => sql.exec<{ data: string | null }>("SELECT data FROM _svc_feed").toArray().map((r) => r.data));
    expect(raw.join(" ")).not.toContain("secret");
    expect(await ctx.sql((sql) => sql.exec<{ data: string }>("SELECT data FROM _svc_rows").toArray().map((r) => r.data).join(" "))).not.toContain("secret");
    // The unique value is free; the key too.
    await ctx.create("tasks", { title: "new", email: "s@x.io" }, { key: row.key });
  });

  it("a soft-deleted row: leaves the deleted list; purge again or of nothing → 404 row_not_found", async () => {
    const ctx = await setup();
    const row = await ctx.create("tasks", { title: "a" });
    const v2 = await ctx.update("tasks", row.key, { title: "b" });
    await ctx.remove("tasks", row.key);
    expect(await json(await purge(ctx, "tasks", row.key), 200)).toEqual({ purged: true, key: row.key });
    expect((await deletedList(ctx, "tasks")).rows).toEqual([]);
    const last = (await ctx.feedAll()).at(-1)!;
    expect(last).toMatchObject({ op: "delete", row_version: v2.version, data: null, author: ctx.agentAuthor, purged: true });
    await ctx.unchanged(async () => expectError(await purge(ctx, "tasks", row.key), 404, "row_not_found"));
    await ctx.unchanged(async () => expectError(await purge(ctx, "tasks", "never"), 404, "row_not_found"));
    await ctx.unchanged(async () => expectError(await purge(ctx, "nope", "never"), 404, "collection_not_found"));
    await ctx.unchanged(async () => expectError(await restore(ctx, "tasks", row.key), 410, "restore_expired"));
  });

  it("bypasses appendOnly and the delete list", async () => {
    const ctx = await setup();
    const log = await ctx.create("logs", { line: 1 });
    expect(await json(await purge(ctx, "logs", log.key), 200)).toEqual({ purged: true, key: log.key });
    // `shared` lets only the creator delete; the owner did not create this row.
    const row = await ctx.create("shared", { a: 1 });
    await ctx.unchanged(async () => expectError(await del(ctx, "shared", row.key, undefined, "owner"), 403, "collection_delete_forbidden"));
    expect(await json(await purge(ctx, "shared", row.key, "owner"), 200)).toEqual({ purged: true, key: row.key });
  });
});
