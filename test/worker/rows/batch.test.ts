// Batches (WIRE §2.3; spec A Shapes 7): POST and DELETE …/batch answer per-row results by
// index, a bad row never aborts the others, at most BATCH_MAX_ROWS rows per call, `on`
// never with per-row keys, and a row with a key is create-or-skip.
import { describe, expect, it, vi } from "vitest";
import { callWith, expectError, json } from "../helpers";
import { setup, type Batch } from "./fixtures";

vi.setConfig({ testTimeout: 30_000 });




const fail = (index: number, code: string, status: number, details?: Record<string, unknown>) => ({
  index, ok: false, error: { code, message: expect.any(String), status, ...(details ? { details } : {}) },
});

describe("batch create", () => {
  it("per-row results by index; bad rows fail alone; good rows land, each with its own feed entry", async () => {
    const ctx = await setup();
    await ctx.create("tasks", { title: "existing" }, { key: "taken" });
    const body = await json<Batch>(await ctx.batchCreate("tasks", {
      rows: [
        { data: { title: "ok 0", email: "a@x.io" } },
        { data: { title: 5 } },
        { key: "mine-2", data: { title: "ok 2" } },
        { data: { title: "clash", email: " A@X.IO " } },
        { key: "taken", data: { title: "would overwrite" } },
        { key: "bad key!", data: { title: "x" } },
        { key: "mine-2", data: { title: "again" } },
        { data: { title: "ok 7" } },
      ],
    }), 200);
    expect(Object.keys(body).sort()).toEqual(["error_count", "ok_count", "results"]);
    expect(body.results[0]).toEqual({ index: 0, ok: true, key: expect.stringMatching(/^r[0-9a-z]{19}$/) });
    expect(body.results.slice(1)).toEqual([
      fail(1, "row_schema_violation", 422, { collection: "tasks", errors: [expect.objectContaining({ path: "/title" })] }),
      { index: 2, ok: true, key: "mine-2" },
      fail(3, "unique_conflict", 409, { field: "email", collection: "tasks" }),
      { index: 4, ok: true, key: "taken" },
      fail(5, "invalid_request", 400, { field: "key" }),
      { index: 6, ok: true, key: "mine-2" },
      { index: 7, ok: true, key: expect.stringMatching(/^r[0-9a-z]{19}$/) },
    ]);
    expect(body.ok_count).toBe(5);
    expect(body.error_count).toBe(3);
    // Create-or-skip: the existing row is untouched; the in-batch duplicate too.
    expect((await ctx.get("tasks", "taken")).data).toEqual({ title: "existing" });
    expect((await ctx.get("tasks", "mine-2")).data).toEqual({ title: "ok 2" });
    const titles = (await ctx.list("tasks")).rows.map((r) => r.data.title);
    expect(titles).toEqual(["existing", "ok 0", "ok 2", "ok 7"]);
    const feed = await ctx.feedAll();
    expect(feed.map((e) => [e.op, e.data.title])).toEqual([["create", "existing"], ["create", "ok 0"], ["create", "ok 2"], ["create", "ok 7"]]);
    expect(feed.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    // Oversized rows fail alone too.
    const sized = await json<Batch>(await ctx.batchCreate("free", { rows: [{ data: { s: "x".repeat(70_000) } }, { data: { s: "small" } }] }), 200);
    expect(sized.results).toEqual([fail(0, "row_size_exceeded", 413, { limit: 65_536, bytes: 70_008 }), { index: 1, ok: true, key: expect.any(String) }]);
  });

  it("on: upserts row by row; with per-row keys → 400 (field on), nothing written", async () => {
    const ctx = await setup();
    const a = await ctx.create("tasks", { title: "a1", email: "a@x.io" });
    const body = await json<Batch>(await ctx.batchCreate("tasks", {
      on: "email", rows: [{ data: { title: "a2", email: "A@x.io" } }, { data: { title: "b1", email: "b@x.io" } }, { data: { title: "b2", email: "b@x.io" } }],
    }, "owner"), 200);
    expect(body).toEqual({ results: [{ index: 0, ok: true, key: a.key }, { index: 1, ok: true, key: expect.any(String) }, { index: 2, ok: true, key: body.results[1].key }], ok_count: 3, error_count: 0 });
    expect((await ctx.get("tasks", a.key)).data).toEqual({ title: "a2", email: "A@x.io" });
    expect((await ctx.get("tasks", body.results[1].key!)).data).toEqual({ title: "b2", email: "b@x.io" });
    const e = await ctx.unchanged(async () => expectError(await ctx.batchCreate("tasks", { on: "email", rows: [{ data: { title: "c", email: "c@x.io" } }, { key: "k", data: { title: "d" } }] }), 400, "invalid_request"));
    expect(e.details).toEqual({ field: "on" });
    const notUnique = await ctx.unchanged(async () => json<Batch>(await ctx.batchCreate("tasks", { on: "title", rows: [{ data: { title: "x" } }] }), 200));
    expect(notUnique.results).toEqual([fail(0, "invalid_request", 400, { field: "on" })]);
  });

  it("at most BATCH_MAX_ROWS (100) rows: 101 → 400 invalid_request (field rows, limit), nothing written", async () => {
    const ctx = await setup();
    const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ data: { i } }));
    const e = await ctx.unchanged(async () => expectError(await ctx.batchCreate("free", { rows: rows(101) }), 400, "invalid_request"));
    expect(e.details).toEqual({ field: "rows", limit: 100 });
    const full = await json<Batch>(await ctx.batchCreate("free", { rows: rows(100) }), 200);
    expect(full.ok_count).toBe(100);
    expect(full.results.map((r) => r.index)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect((await ctx.list("free", { limit: 1000 })).rows.map((r) => r.data.i)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    // The cap is the Worker's setting.
    const lowered = await ctx.unchanged(async () => expectError(await callWith({ BATCH_MAX_ROWS: "3" }, ctx.path("free", "/batch"), { key: ctx.key, json: { rows: rows(4) } }), 400, "invalid_request"));
    expect(lowered.details).toEqual({ field: "rows", limit: 3 });
    expect((await json<Batch>(await callWith({ BATCH_MAX_ROWS: "3" }, ctx.path("free", "/batch"), { key: ctx.key, json: { rows: rows(3) } }), 200)).ok_count).toBe(3);
  });

  it("malformed calls → 400 before any row is tried; an undeclared collection → 404 (malformed rows: batch-rows.test.ts)", async () => {
    const ctx = await setup();
    const bad: Array<[unknown, string]> = [
      [{}, "rows"],
      [{ rows: [] }, "rows"],
      [{ rows: {} }, "rows"],
      [{ rows: [{ data: {} }], extra: true }, "extra"],
      [{ rows: [{ data: {} }], emitEffects: "yes" }, "emitEffects"],
      [{ rows: [{ data: {} }], suppress: ["email"] }, "suppress.0"],
      [{ rows: [{ data: {} }], on: 5 }, "on"],
    ];
    for (const [body, field] of bad) {
      const e = await ctx.unchanged(async () => expectError(await ctx.batchCreate("free", body), 400, "invalid_request"));
      expect(e.details?.field, JSON.stringify(body)).toBe(field);
    }
    const e = await ctx.unchanged(async () => expectError(await ctx.batchCreate("nope", { rows: [{ data: {} }] }), 404, "collection_not_found"));
    expect(e.details).toEqual({ collection: "nope" });
    // Effect options are accepted.
    expect((await json<Batch>(await ctx.batchCreate("free", { rows: [{ data: {} }], emitEffects: true, suppress: ["notify", "webhooks", "agentTasks"] }), 200)).ok_count).toBe(1);
  });

  it("permission refusals are per row: keyClaim server refuses rows with keys only", async () => {
    const ctx = await setup();
    const body = await json<Batch>(await ctx.batchCreate("minted", { rows: [{ data: { a: 1 } }, { key: "k", data: { a: 2 } }] }), 200);
    expect(body.results).toEqual([{ index: 0, ok: true, key: expect.any(String) }, fail(1, "collection_write_forbidden", 403, expect.objectContaining({ collection: "minted" }))]);
  });
});

describe("batch delete", () => {
  it("soft-deletes by key with per-row results; missing and append-only rows fail alone", async () => {
    const ctx = await setup();
    const a = await ctx.create("free", { a: 1 });
    const b = await ctx.create("free", { b: 1 });
    const body = await json<Batch>(await ctx.batchDelete("free", { keys: [a.key, "nope", b.key, a.key, ""] }), 200);
    expect(body).toEqual({
      results: [{ index: 0, ok: true, key: a.key }, fail(1, "row_not_found", 404), { index: 2, ok: true, key: b.key }, fail(3, "row_not_found", 404), fail(4, "row_not_found", 404)],
      ok_count: 2, error_count: 3,
    });
    expect((await ctx.list("free")).rows).toEqual([]);
    const deleted = await json<{ rows: { key: string }[] }>(await ctx.agentCall(ctx.path("free", "/deleted")), 200);
    expect(deleted.rows.map((r) => r.key).sort()).toEqual([a.key, b.key].sort());
    expect((await ctx.feedAll()).map((e) => e.op)).toEqual(["create", "create", "delete", "delete"]);
    const log = await ctx.create("logs", { line: 1 });
    const refused = await ctx.unchanged(async () => json<Batch>(await ctx.batchDelete("logs", { keys: [log.key] }), 200));
    expect(refused.results).toEqual([fail(0, "append_only", 403, { collection: "logs" })]);
  });

  it("at most BATCH_MAX_ROWS keys; a malformed call → 400; undeclared collection → 404 (malformed keys: batch-rows.test.ts)", async () => {
    const ctx = await setup();
    await ctx.create("free", {}, { key: "k" });
    const e = await ctx.unchanged(async () => expectError(await ctx.batchDelete("free", { keys: Array.from({ length: 101 }, (_, i) => `k${i}`) }), 400, "invalid_request"));
    expect(e.details).toEqual({ field: "keys", limit: 100 });
    for (const [body, field] of [[{}, "keys"], [{ keys: [] }, "keys"], [{ keys: "k" }, "keys"], [{ keys: ["k"], extra: 1 }, "extra"]] as const) {
      const bad = await ctx.unchanged(async () => expectError(await ctx.batchDelete("free", body), 400, "invalid_request"));
      expect(bad.details?.field).toBe(field);
    }
    await ctx.unchanged(async () => expectError(await ctx.batchDelete("nope", { keys: ["k"] }), 404, "collection_not_found"));
    const full = await json<Batch>(await ctx.batchDelete("free", { keys: ["k", ...Array.from({ length: 99 }, (_, i) => `none${i}`)] }), 200);
    expect([full.ok_count, full.error_count]).toEqual([1, 99]);
  });
});
