// POST /v1/apps/:id/collections/:name (WIRE §2.3, §5.2; spec A Shapes 5): minted and
// caller keys, dedupe, `on` upserts, unique slots, keyClaim, serverSet, immutable fields,
// schema violations, the row byte cap and the app quotas. Every refusal is checked for
// its exact status, code and details, and for leaving the store exactly as it was.
import { describe, expect, it, vi } from "vitest";
import { expectError, json } from "../helpers";
import { ISO, ROW_KEYS, seedRows, setup, type Ctx, type Row } from "./fixtures";

vi.setConfig({ testTimeout: 30_000 });

async function post(ctx: Ctx, collection: string, body: unknown, who: "agent" | "owner" = "agent"): Promise<Response> {
  return ctx.as(who)(ctx.path(collection), { json: body });
}

describe("create: keys", () => {
  it("mints a key when none is given and answers 201 { row } with the full Row shape", async () => {
    const ctx = await setup();
    const before = Date.now();
    const res = await post(ctx, "tasks", { data: { title: "first", n: 1 } });
    const body = await json<{ row: Row }>(res, 201);
    expect(Object.keys(body)).toEqual(["row"]);
    const row = body.row;
    expect(Object.keys(row).sort()).toEqual(ROW_KEYS);
    expect(row.key).toMatch(/^r[0-9a-z]{19}$/);
    expect(row).toMatchObject({ data: { title: "first", n: 1 }, version: 1, author: ctx.agentAuthor, creator: ctx.agentAuthor, editor: ctx.agentAuthor, deleted_at: null });
    expect(row.created_at).toMatch(ISO);
    expect(row.updated_at).toBe(row.created_at);
    expect(Date.parse(row.created_at)).toBeGreaterThanOrEqual(before - 1000);
    // Minted keys are distinct.
    const keys = new Set<string>([row.key]);
    for (let i = 0; i < 20; i++) keys.add((await ctx.create("tasks", { title: `t${i}` })).key);
    expect(keys.size).toBe(21);
    expect(await ctx.get("tasks", row.key)).toEqual(row);
  });

  it("an owner session creates too, stamped as the human", async () => {
    const ctx = await setup();
    const row = await ctx.create("tasks", { title: "by owner" }, {}, "owner");
    expect(row).toMatchObject({ author: ctx.humanAuthor, creator: ctx.humanAuthor, editor: ctx.humanAuthor });
  });

  it("a caller key that exists returns the existing row, unchanged, with deduped: true and 200", async () => {
    const ctx = await setup();
    const first = await json<{ row: Row }>(await post(ctx, "tasks", { key: "task-1", data: { title: "original" } }), 201);
    expect(first.row.key).toBe("task-1");
    const again = await ctx.unchanged(async () => json<{ row: Row; deduped: true }>(await post(ctx, "tasks", { key: "task-1", data: { title: "other" } }), 200));
    expect(Object.keys(again).sort()).toEqual(["deduped", "row"]);
    expect(again).toEqual({ row: first.row, deduped: true });
    // Even data that would fail the schema dedupes: the existing row wins before validation.
    await ctx.unchanged(async () => expect(await json(await post(ctx, "tasks", { key: "task-1", data: { nope: true } }), 200)).toEqual({ row: first.row, deduped: true }));
    // The owner dedupes on the same key too.
    expect(await json(await post(ctx, "tasks", { key: "task-1", data: { title: "x" } }, "owner"), 200)).toEqual({ row: first.row, deduped: true });
  });

  it("keys: 1–128 of A–Z a–z 0–9 _ . : @ -; anything else is 400 invalid_request (field key)", async () => {
    const ctx = await setup();
    for (const key of ["a", "A-z_0.9:@-x", "k".repeat(128), "user@example.com", "2024-01-01T10:00:00"]) {
      const row = (await json<{ row: Row }>(await post(ctx, "free", { key, data: { key } }), 201)).row;
      expect(row.key).toBe(key);
      expect((await ctx.get("free", key)).data).toEqual({ key });
    }
    for (const key of ["", "a b", "a/b", "é", "a#b", "a?b", "a%2Fb", "tab\t", "new\nline", "k".repeat(129), "💥", "a+b", "(x)"]) {
      const e = await ctx.unchanged(async () => expectError(await post(ctx, "free", { key, data: {} }), 400, "invalid_request"));
      expect(e.details?.field).toBe("key");
    }
    for (const key of [1, null, true, ["a"], { a: 1 }]) {
      const e = await ctx.unchanged(async () => expectError(await post(ctx, "free", { key, data: {} }), 400, "invalid_request"));
      expect(e.details?.field).toBe("key");
    }
  });

  it("data missing, unknown body keys, a non-object body or a non-JSON body → 400; nothing is written", async () => {
    const ctx = await setup();
    let e = await ctx.unchanged(async () => expectError(await post(ctx, "tasks", {}), 400, "invalid_request"));
    expect(e.details?.field).toBe("data");
    e = await ctx.unchanged(async () => expectError(await post(ctx, "tasks", { key: "k1" }), 400, "invalid_request"));
    expect(e.details?.field).toBe("data");
    e = await ctx.unchanged(async () => expectError(await post(ctx, "tasks", { data: { title: "x" }, extra: 1 }), 400, "invalid_request"));
    expect(e.details?.field).toBe("extra");
    for (const body of [null, [], "x", 5]) await ctx.unchanged(async () => expectError(await post(ctx, "tasks", body), 400, "invalid_request"));
    await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.path("tasks"), { method: "POST", body: "{nope", contentType: "application/json" }), 400, "invalid_request"));
    await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.path("tasks"), { method: "POST", body: "", contentType: "application/json" }), 400, "invalid_request"));
    await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.path("tasks"), { method: "POST", body: JSON.stringify({ data: { title: "x" } }), contentType: "text/plain" }), 400, "invalid_request"));
    expect(await ctx.storedCount()).toBe(0);
  });

  it("schemaless collections take any JSON value as data, null included", async () => {
    const ctx = await setup();
    for (const data of [null, 0, "text", true, [1, "a", null], { nested: { deep: [1, { x: null }] } }]) {
      const row = await ctx.create("free", data);
      expect((await ctx.get("free", row.key)).data).toEqual(data);
    }
  });

  it("an undeclared collection → 404 collection_not_found", async () => {
    const ctx = await setup();
    const e = await ctx.unchanged(async () => expectError(await post(ctx, "nope", { data: {} }), 404, "collection_not_found"));
    expect(e.details).toEqual({ collection: "nope" });
    await ctx.unchanged(async () => expectError(await post(ctx, "constructor", { data: {} }), 404, "collection_not_found"));
    await ctx.unchanged(async () => expectError(await post(ctx, "__proto__", { data: {} }), 404, "collection_not_found"));
  });

  it("another human's agent and a stranger's session get app_not_found; no credential 401", async () => {
    const ctx = await setup();
    const other = await setup();
    await ctx.unchanged(async () => expectError(await other.agentCall(ctx.path("tasks"), { json: { data: { title: "x" } } }), 404, "app_not_found"));
    await ctx.unchanged(async () => expectError(await other.ownerCall(ctx.path("tasks"), { json: { data: { title: "x" } } }), 404, "app_not_found"));
    await ctx.unchanged(async () => expectError(await other.agentCall(ctx.path("tasks")), 404, "app_not_found"));
    const { call } = await import("../helpers");
    await ctx.unchanged(async () => expectError(await call(ctx.path("tasks"), { json: { data: { title: "x" } } }), 401, "unauthorized"));
    // A session without a matching Origin is refused before anything happens.
    await ctx.unchanged(async () => expectError(await ctx.ownerCall(ctx.path("tasks"), { json: { data: { title: "x" } }, origin: "https://evil.example" }), 403, "csrf_origin_mismatch"));
  });
});

describe("create: unique", () => {
  it("compares trimmed and case-folded; a clash is 409 unique_conflict naming the field", async () => {
    const ctx = await setup();
    await ctx.create("tasks", { title: "a", email: "Ann@Example.com" });
    for (const email of ["ann@example.com", "  ANN@EXAMPLE.COM  ", "\tann@example.com\n"]) {
      const e = await ctx.unchanged(async () => expectError(await post(ctx, "tasks", { data: { title: "b", email } }), 409, "unique_conflict"));
      expect(e.details).toEqual({ field: "email", collection: "tasks" });
    }
    // The second unique field is checked as well.
    await ctx.create("tasks", { title: "c", handle: "Zed" });
    const e = await ctx.unchanged(async () => expectError(await post(ctx, "tasks", { data: { title: "d", email: "new@x.io", handle: " zed" } }), 409, "unique_conflict"));
    expect(e.details).toEqual({ field: "handle", collection: "tasks" });
    // A near value is not a clash.
    await ctx.create("tasks", { title: "e", email: "ann@example.co" });
  });

  it("null, absent, empty and blank values claim no slot; typed slots keep 1 and \"1\" apart", async () => {
    const ctx = await setup();
    for (const data of [{}, { code: null }, { code: "" }, { code: "   " }, { code: {} }, { code: [1] }, {}, { code: null }, { code: "" }, { code: " " }, { code: [1] }]) {
      await ctx.create("free", data);
    }
    await ctx.create("free", { code: 1 });
    await ctx.create("free", { code: "1" });
    await ctx.create("free", { code: true });
    await ctx.create("free", { code: "true" });
    for (const code of [1, 1.0, true, " 1 ", "TRUE"]) {
      const e = await ctx.unchanged(async () => expectError(await post(ctx, "free", { data: { code } }), 409, "unique_conflict"));
      expect(e.details?.field).toBe("code");
    }
    await ctx.create("free", { code: 2 });
    await ctx.create("free", { code: false });
  });

  it("an update may keep its own value, may not take another's, and frees the old one", async () => {
    const ctx = await setup();
    const a = await ctx.create("tasks", { title: "a", email: "a@x.io" });
    const b = await ctx.create("tasks", { title: "b", email: "b@x.io" });
    expect((await ctx.update("tasks", a.key, { title: "a2", email: " A@X.IO" })).version).toBe(2);
    const e = await ctx.unchanged(async () => expectError(
      await ctx.agentCall(ctx.path("tasks", `/${b.key}`), { method: "PATCH", json: { data: { title: "b", email: "a@x.io" } } }), 409, "unique_conflict"));
    expect(e.details).toEqual({ field: "email", collection: "tasks" });
    await ctx.update("tasks", a.key, { title: "a3", email: "c@x.io" });
    // a@x.io is free again.
    await ctx.update("tasks", b.key, { title: "b2", email: "a@x.io" });
    await ctx.create("tasks", { title: "new", email: "b@x.io" });
  });

  it("a deleted row frees its values; a purged row too", async () => {
    const ctx = await setup();
    const a = await ctx.create("tasks", { title: "a", email: "a@x.io" });
    await ctx.remove("tasks", a.key);
    const b = await ctx.create("tasks", { title: "b", email: "a@x.io" });
    await json(await ctx.agentCall(ctx.path("tasks", `/${b.key}/purge`), { method: "DELETE" }), 200);
    await ctx.create("tasks", { title: "c", email: "a@x.io" });
  });
});

describe("create: on (upsert by a declared unique field)", () => {
  it("updates the matching row in place (200, no deduped, version bumped), else creates (201)", async () => {
    const ctx = await setup();
    const created = await json<{ row: Row }>(await post(ctx, "tasks", { on: "email", data: { title: "v1", email: "Ann@x.io" } }), 201);
    expect(Object.keys(created)).toEqual(["row"]);
    expect(created.row.version).toBe(1);
    const upserted = await json<{ row: Row }>(await post(ctx, "tasks", { on: "email", data: { title: "v2", email: "  ann@X.IO " } }, "owner"), 200);
    expect(Object.keys(upserted)).toEqual(["row"]);
    expect(upserted.row).toMatchObject({
      key: created.row.key, version: 2, data: { title: "v2", email: "  ann@X.IO " },
      creator: ctx.agentAuthor, editor: ctx.humanAuthor, author: ctx.humanAuthor, created_at: created.row.created_at,
    });
    expect(await ctx.storedCount()).toBe(1);
    // A value nobody holds creates.
    const other = await json<{ row: Row }>(await post(ctx, "tasks", { on: "email", data: { title: "v1", email: "bob@x.io" } }), 201);
    expect(other.row.key).not.toBe(created.row.key);
    // No value (absent or empty) claims nothing and always creates.
    await json(await post(ctx, "tasks", { on: "email", data: { title: "no email" } }), 201);
    await json(await post(ctx, "tasks", { on: "email", data: { title: "empty", email: "" } }), 201);
    await json(await post(ctx, "tasks", { on: "email", data: { title: "empty", email: "" } }), 201);
    const feed = await ctx.feedAll();
    expect(feed.map((e) => e.op)).toEqual(["create", "update", "create", "create", "create", "create"]);
  });

  it("the update half is a full update: schema, other unique fields and appendOnly apply", async () => {
    const ctx = await setup();
    const a = await ctx.create("tasks", { title: "a", email: "a@x.io", handle: "h1" });
    await ctx.create("tasks", { title: "b", email: "b@x.io", handle: "h2" });
    await ctx.unchanged(async () => expectError(await post(ctx, "tasks", { on: "email", data: { title: 5, email: "a@x.io" } }), 422, "row_schema_violation"));
    const e = await ctx.unchanged(async () => expectError(await post(ctx, "tasks", { on: "email", data: { title: "a", email: "a@x.io", handle: "H2" } }), 409, "unique_conflict"));
    expect(e.details?.field).toBe("handle");
    expect((await ctx.get("tasks", a.key)).version).toBe(1);
    const logs = await setup({
      $defs: {},
      "x-service-manifest": { app: { name: "L" }, collections: { logs: { read: ["owner"], write: ["owner"], delete: ["owner"], appendOnly: true, unique: ["id"] } } },
    });
    await logs.create("logs", { id: "x", n: 1 });
    await logs.unchanged(async () => expectError(await logs.agentCall(logs.path("logs"), { json: { on: "id", data: { id: "X", n: 2 } } }), 403, "append_only"));
  });

  it("on a field that is not declared unique, with a key, or in a collection without unique → 400 (field on)", async () => {
    const ctx = await setup();
    await ctx.create("tasks", { title: "a", email: "a@x.io" });
    for (const [collection, body] of [
      ["tasks", { on: "title", data: { title: "a" } }],
      ["tasks", { on: "nope", data: { title: "a" } }],
      ["tasks", { on: "email", key: "k1", data: { title: "a", email: "a@x.io" } }],
      ["products", { on: "name", data: { name: "p" } }],
      ["tasks", { on: "", data: { title: "a" } }],
    ] as const) {
      const e = await ctx.unchanged(async () => expectError(await post(ctx, collection, body), 400, "invalid_request"));
      expect(e.details?.field).toBe("on");
    }
    await ctx.unchanged(async () => expectError(await post(ctx, "tasks", { on: 5, data: { title: "a" } }), 400, "invalid_request"));
  });
});

describe("create: keyClaim", () => {
  it("server: a caller key → 403 collection_write_forbidden; without one the key is minted", async () => {
    const ctx = await setup();
    const e = await ctx.unchanged(async () => expectError(await post(ctx, "minted", { key: "mine", data: {} }), 403, "collection_write_forbidden"));
    expect(e.details).toMatchObject({ collection: "minted" });
    const minted = await ctx.create("minted", { a: 1 });
    expect(minted.key).toMatch(/^r[0-9a-z]{19}$/);
    // Even the key of an existing row is refused, not deduped.
    await ctx.unchanged(async () => expectError(await post(ctx, "minted", { key: minted.key, data: {} }), 403, "collection_write_forbidden"));
  });

  it("caller: the key is the caller's id (filled in when omitted); another key → 403; a repeat dedupes", async () => {
    const ctx = await setup();
    const mine = await json<{ row: Row }>(await post(ctx, "mine", { data: { a: 1 } }), 201);
    expect(mine.row.key).toBe(ctx.agent.agent_id);
    expect(await json(await post(ctx, "mine", { data: { a: 2 } }), 200)).toEqual({ row: mine.row, deduped: true });
    expect(await json(await post(ctx, "mine", { key: ctx.agent.agent_id, data: { a: 3 } }), 200)).toEqual({ row: mine.row, deduped: true });
    await ctx.unchanged(async () => expectError(await post(ctx, "mine", { key: "someone-else", data: {} }), 403, "collection_write_forbidden"));
    await ctx.unchanged(async () => expectError(await post(ctx, "mine", { key: ctx.human.humanId, data: {} }), 403, "collection_write_forbidden"));
    const human = await json<{ row: Row }>(await post(ctx, "mine", { data: { by: "owner" } }, "owner"), 201);
    expect(human.row.key).toBe(ctx.human.humanId);
    // Another caller's existing key is refused, not deduped to their row.
    await ctx.unchanged(async () => expectError(await post(ctx, "mine", { key: ctx.agent.agent_id, data: {} }, "owner"), 403, "collection_write_forbidden"));
    await ctx.unchanged(async () => expectError(await post(ctx, "mine", { key: ctx.human.humanId, data: {} }, "agent"), 403, "collection_write_forbidden"));
  });

  it("caller: a soft-deleted row at the caller's key → 409 conflict (restore or purge first), never a 500", async () => {
    const ctx = await setup();
    const mine = await ctx.create("mine", { a: 1 });
    await ctx.remove("mine", mine.key);
    const e = await ctx.unchanged(async () => expectError(await post(ctx, "mine", { data: { a: 2 } }), 409, "conflict"));
    expect(e.details).toEqual({ key: ctx.agent.agent_id });
    // Explicitly naming the key answers the same.
    await ctx.unchanged(async () => expectError(await post(ctx, "mine", { key: ctx.agent.agent_id, data: { a: 2 } }), 409, "conflict"));
    // After a purge the key is free again.
    await json(await ctx.agentCall(ctx.path("mine", `/${mine.key}/purge`), { method: "DELETE" }), 200);
    const again = await json<{ row: Row }>(await post(ctx, "mine", { data: { a: 3 } }), 201);
    expect(again.row).toMatchObject({ key: ctx.agent.agent_id, version: 1, data: { a: 3 } });
  });

  it("free: a soft-deleted row at a given key → 409 conflict; a purged one is replaced by a fresh row", async () => {
    const ctx = await setup();
    await ctx.create("free", { v: 1 }, { key: "k" });
    await ctx.remove("free", "k");
    const e = await ctx.unchanged(async () => expectError(await post(ctx, "free", { key: "k", data: { v: 2 } }), 409, "conflict"));
    expect(e.details).toEqual({ key: "k" });
    await json(await ctx.agentCall(ctx.path("free", "/k/purge"), { method: "DELETE" }), 200);
    const fresh = await ctx.create("free", { v: 3 }, { key: "k" });
    expect(fresh).toMatchObject({ key: "k", version: 1, data: { v: 3 } });
    expect(await ctx.storedCount("collection = 'free'")).toBe(1);
  });
});

describe("create: serverSet", () => {
  async function withProduct(): Promise<Ctx> {
    const ctx = await setup();
    await ctx.create("products", { name: "Pen", price: 2.5 }, { key: "p1" });
    return ctx;
  }

  it("lookup takes the source row's field; product and sum compute from the row", async () => {
    const ctx = await withProduct();
    const line = await ctx.create("lines", { product: "p1", qty: 4, fee: 1 });
    expect(line.data).toEqual({ product: "p1", qty: 4, fee: 1, unitPrice: 2.5, total: 10, sum: 5 });
    expect((await ctx.get("lines", line.key)).data).toEqual(line.data);
  });

  it("a supplied serverSet field → 422 server_set_field_supplied naming it", async () => {
    const ctx = await withProduct();
    for (const [field, value] of [["unitPrice", 2.5], ["total", 10], ["sum", 0], ["unitPrice", null]] as const) {
      const e = await ctx.unchanged(async () => expectError(await post(ctx, "lines", { data: { product: "p1", qty: 4, fee: 1, [field]: value } }), 422, "server_set_field_supplied"));
      expect(e.details).toEqual({ field });
    }
  });

  it("a missing source → 422 server_set_source_missing (unknown, deleted or absent key; a non-number operand)", async () => {
    const ctx = await withProduct();
    for (const data of [{ product: "p2", qty: 1, fee: 1 }, { qty: 1, fee: 1 }]) {
      const e = await ctx.unchanged(async () => expectError(await post(ctx, "lines", { data }), 422, "server_set_source_missing"));
      expect(e.details).toEqual({ field: "unitPrice", from: "products" });
    }
    let e = await ctx.unchanged(async () => expectError(await post(ctx, "lines", { data: { product: "p1", fee: 1 } }), 422, "server_set_source_missing"));
    expect(e.details).toEqual({ field: "total" });
    e = await ctx.unchanged(async () => expectError(await post(ctx, "lines", { data: { product: "p1", qty: 2 } }), 422, "server_set_source_missing"));
    expect(e.details).toEqual({ field: "sum" });
    await ctx.remove("products", "p1");
    e = await ctx.unchanged(async () => expectError(await post(ctx, "lines", { data: { product: "p1", qty: 1, fee: 1 } }), 422, "server_set_source_missing"));
    expect(e.details).toEqual({ field: "unitPrice", from: "products" });
  });

  it("evaluated once: an update may echo or omit serverSet values, not change them; the lookup key is immutable", async () => {
    const ctx = await withProduct();
    await ctx.create("products", { name: "Ink", price: 7 }, { key: "p2" });
    const line = await ctx.create("lines", { product: "p1", qty: 4, fee: 1 });
    // Omitted: carried forward, not recomputed (qty changed, total stays).
    const omitted = await ctx.update("lines", line.key, { product: "p1", qty: 5, fee: 1 });
    expect(omitted.data).toEqual({ product: "p1", qty: 5, fee: 1, unitPrice: 2.5, total: 10, sum: 5 });
    // An unchanged echo is fine.
    const echoed = await ctx.update("lines", line.key, { ...omitted.data, label: "x" });
    expect(echoed.data).toEqual({ ...omitted.data, label: "x" });
    const e = await ctx.unchanged(async () => expectError(
      await ctx.agentCall(ctx.path("lines", `/${line.key}`), { method: "PATCH", json: { data: { ...echoed.data, total: 11 } } }), 422, "server_set_field_supplied"));
    expect(e.details).toEqual({ field: "total" });
    const k = await ctx.unchanged(async () => expectError(
      await ctx.agentCall(ctx.path("lines", `/${line.key}`), { method: "PATCH", json: { data: { product: "p2", qty: 5, fee: 1 } } }), 400, "invalid_request"));
    expect(k.details).toEqual({ field: "product" });
  });
});

describe("create/update: immutable", () => {
  it("a changed value → 400 invalid_request (details.field); an echo is fine; an omitted value carries forward", async () => {
    const ctx = await setup();
    const item = await ctx.create("items", { sku: "A-1", label: "one" });
    const e = await ctx.unchanged(async () => expectError(
      await ctx.agentCall(ctx.path("items", `/${item.key}`), { method: "PATCH", json: { data: { sku: "A-2", label: "one" } } }), 400, "invalid_request"));
    expect(e.details).toEqual({ field: "sku" });
    await ctx.unchanged(async () => expectError(
      await ctx.ownerCall(ctx.path("items", `/${item.key}`), { method: "PATCH", json: { data: { sku: null } } }), 400, "invalid_request"));
    expect((await ctx.update("items", item.key, { sku: "A-1", label: "two" })).data).toEqual({ sku: "A-1", label: "two" });
    const carried = await ctx.update("items", item.key, { label: "three" });
    expect(carried.data).toEqual({ sku: "A-1", label: "three" });
    expect((await ctx.get("items", item.key)).data).toEqual({ sku: "A-1", label: "three" });
    // A row created without the field may not gain it later... as a change from absent.
    const bare = await ctx.create("items", { label: "bare" });
    await ctx.unchanged(async () => expectError(
      await ctx.agentCall(ctx.path("items", `/${bare.key}`), { method: "PATCH", json: { data: { sku: "late", label: "bare" } } }), 400, "invalid_request"));
  });
});

describe("create: schema, size and quotas", () => {
  it("schema violations → 422 row_schema_violation with JSON-pointer paths in details.errors", async () => {
    const ctx = await setup();
    const cases: Array<[unknown, string[]]> = [
      [{ title: 5 }, ["/title"]],
      [{}, ["/title"]],
      [{ title: "x", extra: 1 }, ["/extra"]],
      [{ title: "x", tags: ["ok", 5] }, ["/tags/1"]],
      [{ title: "x", meta: { level: -1 } }, ["/meta/level"]],
      [{ title: "x".repeat(201) }, ["/title"]],
      [{ title: "x", n: 1.5 }, ["/n"]],
      [[], [""]],
      [null, [""]],
      ["string", [""]],
    ];
    for (const [data, paths] of cases) {
      const e = await ctx.unchanged(async () => expectError(await post(ctx, "tasks", { data }), 422, "row_schema_violation"));
      const details = e.details as { collection: string; errors: { path: string; message: string; keyword: string }[] };
      expect(details.collection).toBe("tasks");
      expect(details.errors.map((x) => x.path)).toEqual(paths);
      for (const x of details.errors) {
        expect(typeof x.message).toBe("string");
        expect(typeof x.keyword).toBe("string");
      }
    }
    const two = await ctx.unchanged(async () => expectError(await post(ctx, "tasks", { data: { title: 1, n: "x" } }), 422, "row_schema_violation"));
    expect((two.details as { errors: { path: string }[] }).errors.map((x) => x.path).sort()).toEqual(["/n", "/title"]);
    // An update is held to the same schema.
    const row = await ctx.create("tasks", { title: "ok" });
    await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.path("tasks", `/${row.key}`), { method: "PATCH", json: { data: { title: "ok", nope: 1 } } }), 422, "row_schema_violation"));
  });

  it("row data over 64 KiB → 413 row_size_exceeded; storage: document raises the cap to 256 KiB", async () => {
    const ctx = await setup();
    const sized = (bytes: number) => ({ s: "x".repeat(bytes - 8) }); // {"s":"…"} is 8 bytes of framing
    expect(JSON.stringify(sized(100)).length).toBe(100);
    await ctx.create("free", sized(65_536));
    let e = await ctx.unchanged(async () => expectError(await post(ctx, "free", { data: sized(65_537) }), 413, "row_size_exceeded"));
    expect(e.details).toEqual({ limit: 65_536, bytes: 65_537 });
    // Bytes are UTF-8 bytes, not characters.
    e = await ctx.unchanged(async () => expectError(await post(ctx, "free", { data: { s: "é".repeat(32_765) } }), 413, "row_size_exceeded"));
    expect(e.details).toEqual({ limit: 65_536, bytes: 65_538 });
    await ctx.create("docs", sized(65_537));
    await ctx.create("docs", sized(262_144));
    e = await ctx.unchanged(async () => expectError(await post(ctx, "docs", { data: sized(262_145) }), 413, "row_size_exceeded"));
    expect(e.details).toEqual({ limit: 262_144, bytes: 262_145 });
    // Updates are capped the same way.
    const small = await ctx.create("free", { s: "x" });
    await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.path("free", `/${small.key}`), { method: "PATCH", json: { data: sized(70_000) } }), 413, "row_size_exceeded"));
  });

  it("MAX_ROWS_PER_APP (1000 live rows, across collections) → 409 app_quota_exceeded; deleted rows do not count", async () => {
    const ctx = await setup();
    await seedRows(ctx, "free", 998);
    await ctx.create("tasks", { title: "999th" });
    const last = await ctx.create("tasks", { title: "1000th" });
    let e = await ctx.unchanged(async () => expectError(await post(ctx, "tasks", { data: { title: "1001st" } }), 409, "app_quota_exceeded"));
    expect(e.details).toEqual({ limit: 1000, resource: "rows" });
    // Through the batch route too, per row.
    const batch = await ctx.unchanged(async () => json<{ results: { ok: boolean; error?: { code: string; status: number } }[] }>(
      await ctx.agentCall(ctx.path("tasks", "/batch"), { json: { rows: [{ data: { title: "b" } }] } }), 200));
    expect(batch.results[0]).toMatchObject({ ok: false, error: { code: "app_quota_exceeded", status: 409 } });
    // Updates do not add rows.
    await ctx.update("tasks", last.key, { title: "still fine" });
    // A deleted row frees a slot; restoring it while full is refused.
    await ctx.remove("tasks", last.key);
    const fresh = await ctx.create("tasks", { title: "takes the slot" });
    e = await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.path("tasks", `/${last.key}/restore`), { method: "POST" }), 409, "app_quota_exceeded"));
    expect(e.details).toEqual({ limit: 1000, resource: "rows" });
    await ctx.remove("tasks", fresh.key);
    await json(await ctx.agentCall(ctx.path("tasks", `/${last.key}/restore`), { method: "POST" }), 200);
  });

  it("MAX_STORAGE_BYTES_PER_APP → 409 app_quota_exceeded (resource storage); shrinking updates still work", async () => {
    const ctx = await setup();
    const big = await ctx.create("free", { s: "x".repeat(1000) });
    // Pretend the app already holds nearly its 50 MiB.
    await ctx.setColumn("free", big.key, "bytes", 52_428_800 - 200);
    let e = await ctx.unchanged(async () => expectError(await post(ctx, "free", { data: { s: "y".repeat(300) } }), 409, "app_quota_exceeded"));
    expect(e.details).toEqual({ limit: 52_428_800, resource: "storage" });
    await ctx.create("free", { s: "y" });
    const small = await ctx.create("free", { s: "z" });
    e = await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.path("free", `/${small.key}`), { method: "PATCH", json: { data: { s: "z".repeat(400) } } }), 409, "app_quota_exceeded"));
    expect(e.details).toEqual({ limit: 52_428_800, resource: "storage" });
    expect((await ctx.update("free", small.key, { s: "" })).version).toBe(2);
  });
});
