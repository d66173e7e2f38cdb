// Retention (WIRE §2.3 retention rows, §1.7 camelCase, §5.2 `retention`; spec A Shapes 9):
// GET/PATCH …/retention with { effective, authorDefault, override, wouldPrune }, the
// manifest's default, an owner override that survives redeploys, null clearing an axis,
// maxRows capped at MAX_ROWS_PER_APP, and the sweep on the store's alarm by age and by
// count: hard deletes, no feed entries, every watcher resyncs.
import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { expectError, json } from "../helpers";
import { COLLECTIONS, days, manifestOf, setup, type Ctx } from "./fixtures";

vi.setConfig({ testTimeout: 30_000 });

interface Axes {
  maxRows: number | null;
  maxAgeDays: number | null;
}

interface View {
  effective: Axes;
  authorDefault: Axes;
  override: Axes;
  wouldPrune: number;
}

const NONE: Axes = { maxRows: null, maxAgeDays: null };

async function view(ctx: Ctx, collection: string, who: "agent" | "owner" = "agent"): Promise<View> {
  return json<View>(await ctx.as(who)(ctx.path(collection, "/retention")), 200);
}

async function set(ctx: Ctx, collection: string, body: unknown, who: "agent" | "owner" = "agent"): Promise<View> {
  return json<View>(await ctx.as(who)(ctx.path(collection, "/retention"), { method: "PATCH", json: body }), 200);
}

function patchRaw(ctx: Ctx, collection: string, body: unknown): Promise<Response> {
  return ctx.agentCall(ctx.path(collection, "/retention"), { method: "PATCH", json: body });
}

describe("retention view", () => {
  it("camelCase { effective, authorDefault, override, wouldPrune }; nothing declared → all null", async () => {
    const ctx = await setup();
    const v = await view(ctx, "free");
    expect(Object.keys(v).sort()).toEqual(["authorDefault", "effective", "override", "wouldPrune"]);
    expect(v).toEqual({ effective: NONE, authorDefault: NONE, override: NONE, wouldPrune: 0 });
    expect(await view(ctx, "free", "owner")).toEqual(v);
  });

  it("the manifest's retention is the author default and the effective bound", async () => {
    const ctx = await setup();
    const d = { maxRows: 50, maxAgeDays: 7 };
    expect(await view(ctx, "kept")).toEqual({ effective: d, authorDefault: d, override: NONE, wouldPrune: 0 });
  });

  it("PATCH: a number sets an axis, null clears it, omitted leaves it; effective = override, else default", async () => {
    const ctx = await setup();
    let v = await set(ctx, "kept", { maxRows: 10 });
    expect(v).toEqual({ effective: { maxRows: 10, maxAgeDays: 7 }, authorDefault: { maxRows: 50, maxAgeDays: 7 }, override: { maxRows: 10, maxAgeDays: null }, wouldPrune: 0 });
    v = await set(ctx, "kept", { maxAgeDays: 30 }, "owner");
    expect(v.override).toEqual({ maxRows: 10, maxAgeDays: 30 });
    expect(v.effective).toEqual({ maxRows: 10, maxAgeDays: 30 });
    v = await set(ctx, "kept", {});
    expect(v.override).toEqual({ maxRows: 10, maxAgeDays: 30 });
    v = await set(ctx, "kept", { maxRows: null });
    expect(v).toEqual({ effective: { maxRows: 50, maxAgeDays: 30 }, authorDefault: { maxRows: 50, maxAgeDays: 7 }, override: { maxRows: null, maxAgeDays: 30 }, wouldPrune: 0 });
    v = await set(ctx, "kept", { maxRows: null, maxAgeDays: null });
    expect(v).toEqual({ effective: { maxRows: 50, maxAgeDays: 7 }, authorDefault: { maxRows: 50, maxAgeDays: 7 }, override: NONE, wouldPrune: 0 });
    expect(await view(ctx, "kept")).toEqual(v);
    // Overrides are per collection.
    await set(ctx, "free", { maxAgeDays: 3 });
    expect((await view(ctx, "kept")).override).toEqual(NONE);
    expect((await view(ctx, "free")).effective).toEqual({ maxRows: null, maxAgeDays: 3 });
  });

  it("effective maxRows is capped at MAX_ROWS_PER_APP (1000), for overrides and defaults", async () => {
    const ctx = await setup(manifestOf({ ...COLLECTIONS, big: { read: ["owner"], write: ["owner"], delete: ["owner"], retention: { maxRows: 5000 } } }));
    expect(await view(ctx, "big")).toEqual({ effective: { maxRows: 1000, maxAgeDays: null }, authorDefault: { maxRows: 5000, maxAgeDays: null }, override: NONE, wouldPrune: 0 });
    const v = await set(ctx, "free", { maxRows: 1_000_000 });
    expect(v.override.maxRows).toBe(1_000_000);
    expect(v.effective.maxRows).toBe(1000);
  });

  it("bad values → 400 invalid_request naming the field; the override is unchanged", async () => {
    const ctx = await setup();
    await set(ctx, "free", { maxRows: 5 });
    const cases: Array<[unknown, string]> = [
      [{ maxRows: 0 }, "maxRows"], [{ maxRows: -1 }, "maxRows"], [{ maxRows: 1.5 }, "maxRows"], [{ maxRows: "5" }, "maxRows"],
      [{ maxRows: 1_000_001 }, "maxRows"], [{ maxRows: true }, "maxRows"], [{ maxAgeDays: 0 }, "maxAgeDays"], [{ maxAgeDays: [] }, "maxAgeDays"],
      [{ max_rows: 5 }, "max_rows"], [{ maxRows: 5, extra: 1 }, "extra"], [[], "body"], [null, "body"],
    ];
    for (const [body, field] of cases) {
      const e = await ctx.unchanged(async () => expectError(await patchRaw(ctx, "free", body), 400, "invalid_request"));
      expect(e.details?.field, JSON.stringify(body)).toBe(field);
    }
    await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.path("free", "/retention"), { method: "PATCH" }), 400, "invalid_request"));
    expect((await view(ctx, "free")).override).toEqual({ maxRows: 5, maxAgeDays: null });
    await expectError(await ctx.agentCall(ctx.path("nope", "/retention")), 404, "collection_not_found");
    await ctx.unchanged(async () => expectError(await patchRaw(ctx, "nope", { maxRows: 1 }), 404, "collection_not_found"));
  });

  it("an override survives redeploys, including one that changes the author default", async () => {
    const ctx = await setup();
    await set(ctx, "kept", { maxAgeDays: 90 });
    const redeploy = async (manifest: unknown) => json(await ctx.agentCall(`/v1/apps/${ctx.appId}/versions`, { json: { manifest } }), 200);
    await redeploy(manifestOf());
    expect(await view(ctx, "kept")).toEqual({ effective: { maxRows: 50, maxAgeDays: 90 }, authorDefault: { maxRows: 50, maxAgeDays: 7 }, override: { maxRows: null, maxAgeDays: 90 }, wouldPrune: 0 });
    await redeploy(manifestOf({ ...COLLECTIONS, kept: { ...COLLECTIONS.kept, retention: { maxRows: 20 } } }));
    expect(await view(ctx, "kept")).toEqual({ effective: { maxRows: 20, maxAgeDays: 90 }, authorDefault: { maxRows: 20, maxAgeDays: null }, override: { maxRows: null, maxAgeDays: 90 }, wouldPrune: 0 });
  });
});

describe("the sweep", () => {
  it("by age: rows created more than maxAgeDays ago are hard-deleted, feed-silent; watchers resync", async () => {
    const ctx = await setup();
    const rows = [];
    for (let i = 0; i < 5; i++) rows.push(await ctx.create("kept", { i, code: `c${i}` }));
    const other = await ctx.create("free", { code: "c0" });
    await ctx.setColumn("kept", rows[0].key, "created_at", new Date(Date.now() - days(8)).toISOString());
    await ctx.setColumn("kept", rows[1].key, "created_at", new Date(Date.now() - days(30)).toISOString());
    await ctx.setColumn("kept", rows[2].key, "created_at", new Date(Date.now() - days(6)).toISOString());
    // A soft-deleted old row is the trash's business, not retention's.
    await ctx.setColumn("kept", rows[3].key, "created_at", new Date(Date.now() - days(40)).toISOString());
    await ctx.remove("kept", rows[3].key);
    const old = await ctx.create("free", { old: true });
    await ctx.setColumn("free", old.key, "created_at", new Date(Date.now() - days(400)).toISOString());
    expect((await view(ctx, "kept")).wouldPrune).toBe(2);
    expect((await view(ctx, "free")).wouldPrune).toBe(0);
    const head = await ctx.feedHead();
    expect(await runDurableObjectAlarm(ctx.stub())).toBe(true);
    expect((await ctx.list("kept")).rows.map((r) => r.data.i)).toEqual([2, 4]);
    expect(await ctx.storedCount(`collection = 'kept' AND key IN ('${rows[0].key}', '${rows[1].key}')`)).toBe(0);
    expect((await json<{ rows: { key: string }[] }>(await ctx.agentCall(ctx.path("kept", "/deleted")), 200)).rows.map((r) => r.key)).toEqual([rows[3].key]);
    expect((await ctx.list("free")).rows.map((r) => r.key)).toEqual([other.key, old.key]);
    expect(await ctx.feedHead()).toBe(head);
    expect((await view(ctx, "kept")).wouldPrune).toBe(0);
    await expectError(await ctx.agentCall(ctx.feedPath("since=0")), 410, "resync_required");
    expect((await ctx.feed(`since=${head}`)).entries).toEqual([]);
    // Nothing to prune: the floor stays where it is.
    expect(await runDurableObjectAlarm(ctx.stub())).toBe(true);
    expect((await ctx.feed(`since=${head}`)).entries).toEqual([]);
  });

  it("by count: only the newest maxRows live rows stay; their unique values stay held, the pruned ones are freed", async () => {
    const ctx = await setup();
    const keys: string[] = [];
    for (let i = 0; i < 6; i++) keys.push((await ctx.create("free", { i, code: `c${i}` })).key);
    const v = await set(ctx, "free", { maxRows: 2 });
    expect(v).toEqual({ effective: { maxRows: 2, maxAgeDays: null }, authorDefault: NONE, override: { maxRows: 2, maxAgeDays: null }, wouldPrune: 4 });
    expect(await ctx.sql((_, __, state) => state.storage.getAlarm())).not.toBeNull();
    expect(await runDurableObjectAlarm(ctx.stub())).toBe(true);
    expect((await ctx.list("free")).rows.map((r) => r.data.i)).toEqual([4, 5]);
    await ctx.create("free", { code: "C0" });
    await expectError(await ctx.agentCall(ctx.path("free"), { json: { data: { code: "c5" } } }), 409, "unique_conflict");
    expect(await json(await ctx.agentCall(ctx.path("free", "/count")), 200)).toEqual({ count: 3 });
    expect((await view(ctx, "free")).wouldPrune).toBe(1);
  });

  it("the manifest's default sweeps without any override", async () => {
    const ctx = await setup(manifestOf({ ...COLLECTIONS, small: { read: ["owner"], write: ["owner"], delete: ["owner"], retention: { maxRows: 1 } } }));
    await ctx.create("small", { n: 1 });
    await ctx.create("small", { n: 2 });
    expect((await view(ctx, "small")).wouldPrune).toBe(1);
    expect(await runDurableObjectAlarm(ctx.stub())).toBe(true);
    expect((await ctx.list("small")).rows.map((r) => r.data.n)).toEqual([2]);
  });
});

describe("seed rows", () => {
  it("the sweep never prunes the app's starter rows (input_data), by count or by age, nor counts them", async () => {
    const { call, claimedAgent, signIn } = await import("../helpers");
    const { Ctx } = await import("./fixtures");
    const human = await signIn();
    const agent = await claimedAgent(human);
    const created = await json<{ app_id: string }>(await call("/v1/apps", {
      key: agent.api_key,
      json: { html: "<p>seeded</p>", manifest: manifestOf(), input_data: { free: [{ key: "s1", data: { seed: 1 } }, { key: "s2", data: { seed: 2 } }] } },
    }), 201);
    const ctx = new Ctx(human, agent, created.app_id);
    expect((await ctx.get("free", "s1")).creator).toEqual({ kind: "system", id: "seed" });
    const rows = [];
    for (let i = 0; i < 3; i++) rows.push(await ctx.create("free", { i }));
    await ctx.setColumn("free", "s1", "created_at", new Date(Date.now() - days(400)).toISOString());
    await ctx.setColumn("free", rows[0].key, "created_at", new Date(Date.now() - days(400)).toISOString());
    const v = await set(ctx, "free", { maxRows: 1, maxAgeDays: 30 });
    expect(v.wouldPrune).toBe(2);
    expect(await runDurableObjectAlarm(ctx.stub())).toBe(true);
    expect((await ctx.list("free")).rows.map((r) => r.key)).toEqual(["s1", "s2", rows[2].key]);
  });
});
