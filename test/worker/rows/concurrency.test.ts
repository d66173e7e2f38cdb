// Racing writers (DESIGN: one AppStore per app, one transaction per write): concurrent
// PATCHes with the same if_match, creates with the same unique value or caller key, upserts
// on one value, and a storm of mixed writes whose feed must have no gaps (seq strictly
// increasing by one over every entry, one entry per accepted write and none for refusals).
import { describe, expect, it, vi } from "vitest";
import { setup, type Row } from "./fixtures";

vi.setConfig({ testTimeout: 60_000 });

const N = 20;

async function settle(responses: Promise<Response>[]): Promise<Array<{ status: number; body: any }>> {
  return Promise.all(responses.map(async (p) => {
    const res = await p;
    return { status: res.status, body: await res.json() };
  }));
}

describe("concurrent writers", () => {
  it("N PATCHes with the same if_match: exactly one 200, the rest 409 conflict carrying the winner", async () => {
    const ctx = await setup();
    const row = await ctx.create("tasks", { title: "start" });
    const results = await settle(Array.from({ length: N }, (_, i) =>
      (i % 2 ? ctx.agentCall : ctx.ownerCall).call(ctx, ctx.path("tasks", `/${row.key}`), { method: "PATCH", json: { data: { title: `w${i}` }, if_match: 1 } })));
    const won = results.filter((r) => r.status === 200);
    const lost = results.filter((r) => r.status === 409);
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(N - 1);
    const winner = won[0].body.row as Row;
    expect(winner.version).toBe(2);
    for (const l of lost) {
      expect(l.body.error.code).toBe("conflict");
      expect(l.body.error.details).toEqual({ current: winner });
    }
    expect(await ctx.get("tasks", row.key)).toEqual(winner);
    expect((await ctx.feedAll()).map((e) => e.op)).toEqual(["create", "update"]);
  });

  it("N creates with the same unique value: exactly one 201, the rest 409 unique_conflict", async () => {
    const ctx = await setup();
    const results = await settle(Array.from({ length: N }, (_, i) =>
      ctx.agentCall(ctx.path("tasks"), { json: { data: { title: `t${i}`, email: i % 2 ? "Same@x.io" : " same@X.IO" } } })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    const lost = results.filter((r) => r.status === 409);
    expect(lost).toHaveLength(N - 1);
    for (const l of lost) expect(l.body.error).toMatchObject({ code: "unique_conflict", details: { field: "email", collection: "tasks" } });
    expect(await ctx.storedCount()).toBe(1);
  });

  it("N creates with the same caller key: one created, every other deduped to that row", async () => {
    const ctx = await setup();
    const results = await settle(Array.from({ length: N }, (_, i) =>
      (i % 3 ? ctx.agentCall : ctx.ownerCall).call(ctx, ctx.path("free"), { json: { key: "one-key", data: { i } } })));
    const created = results.filter((r) => r.status === 201);
    const deduped = results.filter((r) => r.status === 200);
    expect(created).toHaveLength(1);
    expect(deduped).toHaveLength(N - 1);
    for (const d of deduped) expect(d.body).toEqual({ row: created[0].body.row, deduped: true });
    expect((await ctx.feedAll()).map((e) => e.op)).toEqual(["create"]);
  });

  it("N upserts on one unique value: one create, then N-1 updates, versions 1..N", async () => {
    const ctx = await setup();
    const results = await settle(Array.from({ length: N }, (_, i) =>
      ctx.agentCall(ctx.path("tasks"), { json: { on: "email", data: { title: `u${i}`, email: "up@x.io" } } })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 200)).toHaveLength(N - 1);
    expect(results.map((r) => r.body.row.version).sort((a: number, b: number) => a - b)).toEqual(Array.from({ length: N }, (_, i) => i + 1));
    expect(new Set(results.map((r) => r.body.row.key)).size).toBe(1);
    expect(await ctx.storedCount()).toBe(1);
  });

  it("a storm of mixed writes: the feed has one entry per accepted write, seq 1..M with no gaps", async () => {
    const ctx = await setup();
    const seeds: Row[] = [];
    for (let i = 0; i < 6; i++) seeds.push(await ctx.create("tasks", { title: `s${i}`, email: `s${i}@x.io` }));
    const calls: Promise<Response>[] = [];
    for (let i = 0; i < 12; i++) {
      calls.push(ctx.agentCall(ctx.path("tasks"), { json: { data: { title: `n${i}`, email: `n${i % 4}@x.io` } } })); // some unique clashes
      calls.push(ctx.ownerCall(ctx.path("tasks", `/${seeds[i % 6].key}`), { method: "PATCH", json: { data: { title: `p${i}`, email: `s${i % 6}@x.io` } } }));
      calls.push(ctx.agentCall(ctx.path("tasks"), { json: { data: { title: 5 } } })); // always refused
      if (i < 6) calls.push(ctx.agentCall(ctx.path("tasks", `/${seeds[i].key}`), { method: "DELETE", json: { if_match: 1 } })); // some stale
      calls.push(ctx.agentCall(ctx.path("free", "/batch"), { json: { rows: [{ data: { i } }, { key: "same", data: { i } }] } }));
    }
    const results = await settle(calls);
    expect(results.every((r) => r.status < 500)).toBe(true);
    const accepted = results.reduce((n, r) => {
      if (r.status === 201) return n + 1;
      if (r.status === 200 && r.body.results) return n + r.body.results.filter((x: { ok: boolean; key?: string }) => x.ok).length;
      if (r.status === 200 && r.body.deleted) return n + 1;
      if (r.status === 200 && r.body.row) return n + 1;
      return n;
    }, 0);
    // Batch rows at the shared key after the first are deduped: ok but no write.
    const dedupedInBatches = results.filter((r) => r.body.results).length - 1;
    const feed = await ctx.feedAll();
    const seqs = feed.map((e) => e.seq);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
    expect(feed.length).toBe(6 + accepted - dedupedInBatches);
    const stored = await ctx.sql((sql) => Number(sql.exec<{ n: number }>("SELECT max(seq) AS n FROM _svc_feed").one().n));
    expect(stored).toBe(feed.length);
  });
});
