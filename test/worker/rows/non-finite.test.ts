// Row data with a number JSON cannot hold (spec B: every bad input gets a catalogue error
// and changes nothing). `1e400` parses to Infinity; stored through JSON.stringify it would
// silently become null — data lost, and a row that breaks its own schema (`integer`). The
// store refuses any such value, anywhere in the data, with 400 invalid_request naming it
// (`details.field` a dotted path under `data`, like the route's other field errors, and
// `details.path` the JSON pointer schema errors use), on every door: create, update, an
// `on` upsert, batch rows (per row) and the app page's /_svc/c, before anything is written.
// A serverSet value that overflows is refused the same way.
import { describe, expect, it, vi } from "vitest";
import type { AppStore, CallContext } from "../../../durable-objects/app-store/contract";
import { expectError, json } from "../helpers";
import { appCall, deploy, manifest, owner } from "../serve/helpers";
import { Ctx, setup } from "./fixtures";

vi.setConfig({ testTimeout: 30_000 });

function raw(ctx: Ctx, path: string, body: string, method = "POST"): Promise<Response> {
  return ctx.agentCall(path, { method, body, contentType: "application/json" });
}

describe("non-finite numbers in row data", () => {
  it("create: 400 invalid_request naming the value, wherever it sits; nothing is stored", async () => {
    const ctx = await setup();
    const cases: Array<[string, string, string, string]> = [
      ["tasks", `{"title":"x","n":1e400}`, "data.n", "/n"],
      ["tasks", `{"title":"x","score":-1e999}`, "data.score", "/score"],
      ["tasks", `{"title":"x","meta":{"level":1e309}}`, "data.meta.level", "/meta/level"],
      ["free", `{"a":[1,{"b":[2,-1E+400]}]}`, "data.a.1.b.1", "/a/1/b/1"],
      ["free", `1e400`, "data", ""],
      ["free", `[1e400]`, "data.0", "/0"],
      ["free", `{"we/ird~":1e400}`, "data.we/ird~", "/we~1ird~0"],
    ];
    for (const [collection, data, field, path] of cases) {
      const e = await ctx.unchanged(async () => expectError(await raw(ctx, ctx.path(collection), `{"data":${data}}`), 400, "invalid_request"));
      expect(e.details, data).toEqual({ field, path });
      // With a caller key too: the key stays free.
      await ctx.unchanged(async () => expectError(await raw(ctx, ctx.path(collection), `{"key":"k1","data":${data}}`), 400, "invalid_request"));
    }
    // The largest finite double is a number like any other, stored exactly.
    const max = await json<{ row: { key: string; data: unknown } }>(await raw(ctx, ctx.path("free"), `{"data":{"big":1.7976931348623157e308,"small":-5e-324}}`), 201);
    expect((await ctx.get("free", max.row.key)).data).toEqual({ big: Number.MAX_VALUE, small: -5e-324 });
  });

  it("update and an `on` upsert: refused the same way, the row keeps its data and version", async () => {
    const ctx = await setup();
    const row = await ctx.create("tasks", { title: "t", n: 1, email: "a@x.io" });
    const e = await ctx.unchanged(async () => expectError(await raw(ctx, ctx.path("tasks", `/${row.key}`), `{"data":{"title":"t","n":1e400}}`, "PATCH"), 400, "invalid_request"));
    expect(e.details).toEqual({ field: "data.n", path: "/n" });
    // The update half of an upsert (the email is held) and its create half (it is not).
    const up = await ctx.unchanged(async () => expectError(await raw(ctx, ctx.path("tasks"), `{"on":"email","data":{"title":"t","email":"A@x.io","score":1e400}}`), 400, "invalid_request"));
    expect(up.details).toEqual({ field: "data.score", path: "/score" });
    const fresh = await ctx.unchanged(async () => expectError(await raw(ctx, ctx.path("tasks"), `{"on":"email","data":{"title":"t","email":"b@x.io","score":1e400}}`), 400, "invalid_request"));
    expect(fresh.details).toEqual({ field: "data.score", path: "/score" });
    expect(await ctx.get("tasks", row.key)).toEqual(row);
  });

  it("batch: the bad row fails alone with the same error; the good rows land", async () => {
    const ctx = await setup();
    const before = await ctx.storedCount();
    const res = await raw(ctx, ctx.path("free", "/batch"), `{"rows":[{"data":{"i":0}},{"data":{"i":1e400}},{"key":"b2","data":{"i":[2,-1e400]}},{"data":{"i":3}}]}`);
    const body = await json<{ results: unknown[]; ok_count: number; error_count: number }>(res, 200);
    expect(body).toEqual({
      results: [
        { index: 0, ok: true, key: expect.any(String) },
        { index: 1, ok: false, error: { code: "invalid_request", message: expect.any(String), status: 400, details: { field: "data.i", path: "/i" } } },
        { index: 2, ok: false, error: { code: "invalid_request", message: expect.any(String), status: 400, details: { field: "data.i.1", path: "/i/1" } } },
        { index: 3, ok: true, key: expect.any(String) },
      ],
      ok_count: 2, error_count: 2,
    });
    expect(await ctx.storedCount()).toBe(before + 2);
    expect(await ctx.storedCount("key = 'b2'")).toBe(0);
    expect((await ctx.listAll("free")).map((r) => r.data)).toEqual([{ i: 0 }, { i: 3 }]);
    // Batch upserts too.
    await ctx.create("free", { code: "c", i: 1 });
    const up = await json<{ results: unknown[] }>(await raw(ctx, ctx.path("free", "/batch"), `{"on":"code","rows":[{"data":{"code":"C","i":1e400}}]}`), 200);
    expect(up.results).toEqual([{ index: 0, ok: false, error: { code: "invalid_request", message: expect.any(String), status: 400, details: { field: "data.i", path: "/i" } } }]);
  });

  it("the store itself refuses NaN and ±Infinity (its one validation path), and a serverSet value that overflows", async () => {
    const ctx = await setup();
    const agent: CallContext = { appId: ctx.appId, version: 1, principal: { kind: "agent", agentId: ctx.agent.agent_id } };
    const store = <T>(fn: (s: AppStore) => Promise<T>) => ctx.sql((_, instance) => fn(instance));
    for (const [data, field] of [[{ v: Number.NaN }, "data.v"], [{ v: [Infinity] }, "data.v.0"], [-Infinity, "data"]] as const) {
      const out = await ctx.unchanged(() => store((s) => s.createRow(agent, "free", { data })));
      expect(out).toMatchObject({ ok: false, error: { code: "invalid_request", details: { field } } });
    }
    const row = await ctx.create("free", { v: 1 });
    expect(await ctx.unchanged(() => store((s) => s.updateRow(agent, "free", row.key, { data: { v: Number.NaN } })))).toMatchObject({
      ok: false, error: { code: "invalid_request", details: { field: "data.v", path: "/v" } },
    });
    // unitPrice (looked up) × qty overflows: the computed total is refused, not stored as null.
    await ctx.create("products", { name: "Dear", price: 1e308 }, { key: "p9" });
    const e = await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.path("lines"), { json: { data: { product: "p9", qty: 2, fee: 0 } } }), 400, "invalid_request"));
    expect(e.details).toEqual({ field: "data.total", path: "/total" });
  });

  it("the app page's door (/_svc/c): create and update refused the same way", async () => {
    const who = await owner();
    const app = await deploy(who, {
      manifest: manifest({ name: "Open book" }, { collections: { book: { read: ["anyone"], write: ["anyone"], update: ["anyone"], delete: ["owner"] } } }),
    });
    const ctx = new Ctx(who.human, who.agent, app.app_id);
    const row = await ctx.create("book", { n: 1 });
    const post = await ctx.unchanged(async () => expectError(await appCall(app.slug, "/_svc/c/book", {
      method: "POST", body: `{"data":{"n":1e400}}`, headers: { "content-type": "application/json" },
    }), 400, "invalid_request"));
    expect(post.details).toEqual({ field: "data.n", path: "/n" });
    const patch = await ctx.unchanged(async () => expectError(await appCall(app.slug, `/_svc/c/book/${row.key}`, {
      method: "PATCH", body: `{"data":{"n":[1,1e400]}}`, headers: { "content-type": "application/json" },
    }), 400, "invalid_request"));
    expect(patch.details).toEqual({ field: "data.n.1", path: "/n/1" });
    expect(await ctx.get("book", row.key)).toEqual(row);
  });
});
