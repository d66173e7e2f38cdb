// Batches with bad rows in them (WIRE §2.3: "a bad row never aborts the others"): a row
// the edge refuses (too deep, an unknown field, a key that is not a string or too long,
// no data, not an object) is an error in its own result, with the code the single-row
// route answers for the same row, while the good rows around it are written and the bad
// ones leave no trace. Also the batch body cap: a full batch of maximal rows fits it.
import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { config } from "../../../src/config";
import { batchBodyBytes } from "../../../src/http/v1/rows";
import { callWith, expectError, json } from "../helpers";
import { setup, type Batch, type Ctx } from "./fixtures";

vi.setConfig({ testTimeout: 60_000 });


type Obj = Record<string, unknown>;



/** A value nested `depth` arrays deep. */
function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

const fail = (index: number, code: string, status: number, details?: Obj) => ({
  index, ok: false, error: { code, message: expect.any(String), status, ...(details ? { details } : {}) },
});

/** zod's details for one field: `{ field, issues: [{ field, message }] }`. */
const zodDetails = (field: string) => ({ field, issues: [{ field, message: expect.any(String) }] });

/** The rows of the store, by key, with the rest of what a write leaves behind. */
async function state(ctx: Ctx): Promise<{ keys: string[]; unique: unknown[]; feed: number; outbox: number }> {
  const snap = await ctx.snapshot();
  return {
    keys: (snap.rows as Array<{ key: string }>).map((r) => r.key),
    unique: snap.unique as unknown[],
    feed: (snap.feed as unknown[]).length,
    outbox: (snap.outbox as unknown[]).length,
  };
}

describe("batch create with bad rows", () => {
  it("each bad row fails alone with the single-row route's code; the good rows land; the bad ones leave nothing", async () => {
    const ctx = await setup();
    await ctx.create("tasks", { title: "before", email: "b@x.io" }, { key: "before" });
    const before = await state(ctx);
    const rows: unknown[] = [
      { data: { title: "good 0", email: "g0@x.io" } },
      { data: { title: "deep", meta: nested(150) } },
      { data: { title: "extra" }, extra: 1 },
      { key: 5, data: { title: "numeric key" } },
      5,
      { key: "no-data" },
      { key: "k".repeat(129), data: { title: "long key" } },
      { key: "good-7", data: { title: "good 7", email: "g7@x.io" } },
      null,
      { data: { title: 5 } },
      { key: "bad key!", data: { title: "x" } },
      { on: "email", data: { title: "per-row on" } },
      ["data", { title: "array" }],
      { data: { title: "good 13" } },
    ];
    const body = await json<Batch>(await ctx.batchCreate("tasks", { rows }), 200);
    expect(body.results).toEqual([
      { index: 0, ok: true, key: expect.any(String) },
      fail(1, "invalid_request", 400, { field: "rows.1.data", limit: 100 }),
      fail(2, "invalid_request", 400, zodDetails("rows.2.extra")),
      fail(3, "invalid_request", 400, zodDetails("rows.3.key")),
      fail(4, "invalid_request", 400, zodDetails("rows.4")),
      fail(5, "invalid_request", 400, zodDetails("rows.5.data")),
      fail(6, "invalid_request", 400, zodDetails("rows.6.key")),
      { index: 7, ok: true, key: "good-7" },
      fail(8, "invalid_request", 400, zodDetails("rows.8")),
      fail(9, "row_schema_violation", 422, { collection: "tasks", errors: [expect.objectContaining({ path: "/title" })] }),
      fail(10, "invalid_request", 400, { field: "key" }),
      fail(11, "invalid_request", 400, zodDetails("rows.11.on")),
      fail(12, "invalid_request", 400, zodDetails("rows.12")),
      { index: 13, ok: true, key: expect.any(String) },
    ]);
    expect([body.ok_count, body.error_count]).toEqual([3, 11]);

    // The good rows are there, each with its feed entry and unique slot; nothing else is.
    const good = [body.results[0].key!, "good-7", body.results[13].key!];
    const after = await state(ctx);
    expect(after.keys).toEqual([...before.keys, ...good]);
    expect(after.feed).toBe(before.feed + 3);
    expect(after.outbox).toBe(before.outbox);
    expect(after.unique).toHaveLength(before.unique.length + 2);
    expect((await ctx.list("tasks")).rows.map((r) => r.data.title)).toEqual(["before", "good 0", "good 7", "good 13"]);

    // The same rows sent alone to the single-row route: the same code and status, and the
    // same field, named there from the body (`key`, not `rows.3.key`). Row 11 is the
    // exception by design: `on` belongs to the single route's body but to the batch call.
    const singleField: Record<number, string | undefined> = { 1: "data", 2: "extra", 3: "key", 4: "body", 5: "data", 6: "key", 8: "body", 9: undefined, 10: "key", 12: "body" };
    await ctx.unchanged(async () => {
      for (const [at, field] of Object.entries(singleField)) {
        const index = Number(at);
        const { error } = body.results[index];
        const single = await expectError(await ctx.agentCall(ctx.path("tasks"), { json: rows[index] }), error!.status, error!.code as never);
        expect(single.details?.field, `row ${index}`).toBe(field);
        if (field !== undefined && index !== 10) expect(error!.details?.field).toBe(field === "body" ? `rows.${index}` : `rows.${index}.${field}`);
      }
    });
  });

  it("a batch of nothing but bad rows answers 200 with every error and changes nothing; an undeclared collection is still a 404", async () => {
    const ctx = await setup();
    await ctx.create("free", { a: 1 });
    const body = await ctx.unchanged(async () => json<Batch>(await ctx.batchCreate("free", { rows: [{ data: nested(101) }, {}, "row"] }), 200));
    expect(body).toEqual({
      results: [fail(0, "invalid_request", 400, { field: "rows.0.data", limit: 100 }), fail(1, "invalid_request", 400, zodDetails("rows.1.data")), fail(2, "invalid_request", 400, zodDetails("rows.2"))],
      ok_count: 0, error_count: 3,
    });
    // Nested exactly as deep as allowed is a good row.
    expect((await json<Batch>(await ctx.batchCreate("free", { rows: [{ data: nested(99) }] }), 200)).ok_count).toBe(1);
    const e = await ctx.unchanged(async () => expectError(await ctx.batchCreate("nope", { rows: [{}] }), 404, "collection_not_found"));
    expect(e.details).toEqual({ collection: "nope" });
  });

  it("problems of the call itself stay a 400 for the whole call, nothing written", async () => {
    const ctx = await setup();
    const bad: Array<[unknown, string]> = [
      [{ rows: [{ data: {} }, { key: 5, data: {} }], on: "code" }, "on"],
      [{ rows: [{ data: {} }], on: "x".repeat(65) }, "on"],
      [{ rows: "rows" }, "rows"],
      [{ rows: [nested(3)], suppress: "notify" }, "suppress"],
      [{ rows: Array.from({ length: 101 }, () => 5) }, "rows"],
      [[{ data: {} }], "body"],
    ];
    for (const [body, field] of bad) {
      const e = await ctx.unchanged(async () => expectError(await ctx.batchCreate("free", body), 400, "invalid_request"));
      expect(e.details?.field, JSON.stringify(body).slice(0, 80)).toBe(field);
    }
  });
});

describe("batch delete with bad keys", () => {
  it("a key that is not a string fails alone; a key no row can have is row_not_found, as on the single route", async () => {
    const ctx = await setup();
    const a = await ctx.create("free", { a: 1 });
    const b = await ctx.create("free", { b: 1 });
    const kept = await ctx.create("free", { c: 1 });
    const long = "x".repeat(129);
    const body = await json<Batch>(await ctx.batchDelete("free", { keys: [a.key, 5, long, null, b.key, "nope", { key: kept.key }, "y".repeat(5000)] }), 200);
    expect(body).toEqual({
      results: [
        { index: 0, ok: true, key: a.key },
        fail(1, "invalid_request", 400, zodDetails("keys.1")),
        fail(2, "row_not_found", 404),
        fail(3, "invalid_request", 400, zodDetails("keys.3")),
        { index: 4, ok: true, key: b.key },
        fail(5, "row_not_found", 404),
        fail(6, "invalid_request", 400, zodDetails("keys.6")),
        fail(7, "row_not_found", 404),
      ],
      ok_count: 2, error_count: 6,
    });
    expect((await ctx.list("free")).rows.map((r) => r.key)).toEqual([kept.key]);
    // The single-row route answers the same for the over-long key.
    await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.path("free", `/${long}`), { method: "DELETE" }), 404, "row_not_found"));
  });
});

describe("batch body cap", () => {
  const ROW_BYTES = 65_536;
  /** Row data whose stored JSON is exactly `bytes` long. */
  const sized = (bytes: number, i: number) => ({ s: `${String(i).padStart(3, "0")}${"x".repeat(bytes - 11)}` });
  const longKey = (i: number) => `${String(i).padStart(3, "0")}${"k".repeat(125)}`;

  it("is derived from the limits: BATCH_MAX_ROWS × (MAX_ROW_DATA_BYTES + 1 KiB) + 4 KiB, never below MAX_JSON_BODY_BYTES", () => {
    expect(batchBodyBytes(config(env))).toBe(100 * (65_536 + 1024) + 4096);
    expect(batchBodyBytes(config({ BATCH_MAX_ROWS: "5" }))).toBe(1_048_576);
    expect(batchBodyBytes(config({ BATCH_MAX_ROWS: "10", MAX_ROW_DATA_BYTES: "200000" }))).toBe(10 * (200_000 + 1024) + 4096);
  });

  it("a full batch of maximal rows with maximal keys is accepted; one byte over the cap is 413 for the call, nothing written", async () => {
    const ctx = await setup();
    const rows = Array.from({ length: 100 }, (_, i) => ({ key: longKey(i), data: sized(ROW_BYTES, i) }));
    expect(JSON.stringify(rows[0].data)).toHaveLength(ROW_BYTES);
    const text = JSON.stringify({ rows });
    const cap = 100 * (65_536 + 1024) + 4096;
    expect(text.length).toBeGreaterThan(6_500_000);

    // One byte over (trailing whitespace is still valid JSON): refused whole.
    const over = await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.path("free", "/batch"), { body: text.padEnd(cap + 1, " "), contentType: "application/json" }), 413, "payload_too_large"));
    expect(over.details).toEqual({ limit: cap });

    // Exactly at the cap: every row written.
    const body = await json<Batch>(await ctx.agentCall(ctx.path("free", "/batch"), { body: text.padEnd(cap, " "), contentType: "application/json" }), 200);
    expect([body.ok_count, body.error_count]).toEqual([100, 0]);
    expect(body.results.map((r) => r.key)).toEqual(rows.map((r) => r.key));
    expect(await ctx.storedCount(`collection = 'free' AND bytes = ${ROW_BYTES}`)).toBe(100);
    expect((await ctx.get("free", longKey(42))).data).toEqual(sized(ROW_BYTES, 42));
  });

  it("100 rows of about 60 KB are accepted as one batch", async () => {
    const ctx = await setup();
    const rows = Array.from({ length: 100 }, (_, i) => ({ data: sized(60_000, i) }));
    const body = await json<Batch>(await ctx.batchCreate("free", { rows }), 200);
    expect([body.ok_count, body.error_count]).toEqual([100, 0]);
    expect(await ctx.storedCount("collection = 'free'")).toBe(100);
  });

  it("follows the Worker's settings; the delete batch and the single-row route keep the JSON body cap", async () => {
    const ctx = await setup();
    const big = JSON.stringify({ rows: Array.from({ length: 20 }, (_, i) => ({ data: sized(60_000, i) })) });
    const lowered = await ctx.unchanged(async () => expectError(
      await callWith({ BATCH_MAX_ROWS: "10" }, ctx.path("free", "/batch"), { key: ctx.key, body: big, contentType: "application/json" }), 413, "payload_too_large"));
    expect(lowered.details).toEqual({ limit: 1_048_576 });
    const deletes = await ctx.unchanged(async () => expectError(await ctx.batchDelete("free", { keys: Array.from({ length: 100 }, () => "k".repeat(11_000)) }), 413, "payload_too_large"));
    expect(deletes.details).toEqual({ limit: 1_048_576 });
    const single = await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.path("free"), { json: { data: { s: "x".repeat(1_100_000) } } }), 413, "payload_too_large"));
    expect(single.details).toEqual({ limit: 1_048_576 });
  });
});
