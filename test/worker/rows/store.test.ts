// The AppStore's RPC surface called directly (runInDurableObject), for principals the /v1
// routes never carry: anonymous writers and their per-collection budget (WIRE §5.2
// anonWriteBudget, spec B rule 11), the bot challenge on create AND on the update half of
// an upsert (antiAbuse), and the store's own guard on row data nesting. Results are the
// plain `{ ok, value } | { ok: false, error }` outcomes.
import { describe, expect, it, vi } from "vitest";
import type { AppStore, CallContext } from "../../../durable-objects/app-store/contract";
import type { Principal } from "../../../src/permissions";
import { setup, type Ctx } from "./fixtures";

vi.setConfig({ testTimeout: 30_000 });

const PUBLIC = {
  $defs: {},
  "x-service-manifest": {
    app: { name: "Guestbook" },
    collections: {
      book: { read: ["anyone"], write: ["anyone"], update: ["anyone"], delete: ["owner"], unique: ["email"], anonWriteBudget: { perIpPerDay: 2, perAppPerDay: 3 } },
      open: { read: ["anyone"], write: ["anyone"], update: ["anyone"], delete: ["owner"], anonWriteBudget: { perIpPerDay: 0, perAppPerDay: 0 } },
      guarded: { read: ["anyone"], write: ["anyone"], update: ["anyone"], delete: ["owner"], unique: ["email"], antiAbuse: "turnstile" },
    },
  },
};

function callAs(ctx: Ctx, principal: Principal, challenge: CallContext["challenge"] = "absent"): CallContext {
  return { appId: ctx.appId, version: 1, principal, challenge };
}

const anon = (ip: string): Principal => ({ kind: "anonymous", ip });

async function store<T>(ctx: Ctx, fn: (s: AppStore) => Promise<T>): Promise<T> {
  return ctx.sql((_, instance) => fn(instance));
}

describe("anonymous writers", () => {
  it("anonWriteBudget: per IP and per app per day → 409 anon_write_budget_exceeded with details.scope; owner-level writes never count", async () => {
    const ctx = await setup(PUBLIC);
    const create = (p: Principal, data: unknown) => store(ctx, (s) => s.createRow(callAs(ctx, p), "book", { data }));
    expect((await create(anon("1.1.1.1"), { n: 1 })).ok).toBe(true);
    const second = await create(anon("1.1.1.1"), { n: 2 });
    expect(second.ok && second.value.row.author).toEqual({ kind: "anon", id: "anon" });
    const before = await ctx.snapshot();
    expect(await create(anon("1.1.1.1"), { n: 3 })).toEqual({ ok: false, error: { code: "anon_write_budget_exceeded", message: expect.any(String), details: { scope: "perIpPerDay", limit: 2 } } });
    expect(await ctx.snapshot()).toEqual(before);
    expect((await create(anon("2.2.2.2"), { n: 4 })).ok).toBe(true);
    expect(await create(anon("3.3.3.3"), { n: 5 })).toEqual({ ok: false, error: { code: "anon_write_budget_exceeded", message: expect.any(String), details: { scope: "perAppPerDay", limit: 3 } } });
    // The owner and the agent are never counted, and never refused by it.
    await ctx.create("book", { by: "agent" });
    await ctx.create("book", { by: "owner" }, {}, "owner");
    expect((await create({ kind: "agent", agentId: ctx.agent.agent_id }, { n: 6 })).ok).toBe(true);
    const budget = await ctx.sql((sql) => sql.exec("SELECT scope, subject, used FROM _svc_anon_budget ORDER BY scope, subject").toArray());
    expect(budget).toEqual([
      { scope: "perAppPerDay", subject: "app", used: 3 },
      { scope: "perIpPerDay", subject: "1.1.1.1", used: 2 },
      { scope: "perIpPerDay", subject: "2.2.2.2", used: 1 },
    ]);
  });

  it("a refused write spends no budget; 0 means unlimited", async () => {
    const ctx = await setup(PUBLIC);
    await ctx.create("book", { email: "taken@x.io" });
    for (let i = 0; i < 3; i++) {
      const r = await store(ctx, (s) => s.createRow(callAs(ctx, anon("4.4.4.4")), "book", { data: { email: "TAKEN@x.io" } }));
      expect(r).toMatchObject({ ok: false, error: { code: "unique_conflict" } });
    }
    expect(await ctx.sql((sql) => sql.exec("SELECT count(*) AS n FROM _svc_anon_budget").one().n)).toBe(0);
    for (let i = 0; i < 8; i++) expect((await store(ctx, (s) => s.createRow(callAs(ctx, anon("5.5.5.5")), "open", { data: { i } }))).ok).toBe(true);
  });

  it("antiAbuse: create and the update half of an upsert need a verified challenge; a plain update does not", async () => {
    const ctx = await setup(PUBLIC);
    const a = anon("6.6.6.6");
    const create = (challenge: CallContext["challenge"], input: { data: unknown; on?: string }) => store(ctx, (s) => s.createRow(callAs(ctx, a, challenge), "guarded", input));
    expect(await create("absent", { data: { email: "g@x.io" } })).toMatchObject({ ok: false, error: { code: "turnstile_required" } });
    expect(await create("failed", { data: { email: "g@x.io" } })).toMatchObject({ ok: false, error: { code: "turnstile_verification_failed" } });
    const made = await create("verified", { data: { email: "g@x.io", n: 1 } });
    expect(made).toMatchObject({ ok: true, value: { created: true } });
    const before = await ctx.snapshot();
    expect(await create("absent", { on: "email", data: { email: "G@x.io", n: 2 } })).toMatchObject({ ok: false, error: { code: "turnstile_required" } });
    expect(await create("failed", { on: "email", data: { email: "G@x.io", n: 2 } })).toMatchObject({ ok: false, error: { code: "turnstile_verification_failed" } });
    expect(await ctx.snapshot()).toEqual(before);
    expect(await create("verified", { on: "email", data: { email: "G@x.io", n: 2 } })).toMatchObject({ ok: true, value: { created: false, row: { version: 2 } } });
    const key = made.ok ? made.value.row.key : "";
    expect(await store(ctx, (s) => s.updateRow(callAs(ctx, a), "guarded", key, { data: { email: "g@x.io", n: 3 } }))).toMatchObject({ ok: true, value: { version: 3 } });
    // Owner-level writers are never challenged.
    await ctx.create("guarded", { email: "o@x.io" });
    expect((await store(ctx, (s) => s.createRow(callAs(ctx, { kind: "agent", agentId: ctx.agent.agent_id }), "guarded", { on: "email", data: { email: "o@x.io", n: 1 } }))).ok).toBe(true);
  });
});

describe("store guards", () => {
  it("row data nested more than 100 levels is refused by the store itself (400 invalid_request), at 100 it is fine", async () => {
    const ctx = await setup();
    const nest = (depth: number): unknown => (depth === 0 ? 1 : [nest(depth - 1)]);
    const agent = callAs(ctx, { kind: "agent", agentId: ctx.agent.agent_id });
    const before = await ctx.snapshot();
    expect(await store(ctx, (s) => s.createRow(agent, "free", { data: nest(101) }))).toEqual({
      ok: false, error: { code: "invalid_request", message: expect.any(String), details: { field: "data", limit: 100 } },
    });
    expect(await ctx.snapshot()).toEqual(before);
    const ok = await store(ctx, (s) => s.createRow(agent, "free", { data: nest(100) }));
    expect(ok.ok).toBe(true);
    const key = ok.ok ? ok.value.row.key : "";
    expect(await store(ctx, (s) => s.updateRow(agent, "free", key, { data: { deep: nest(100) } }))).toMatchObject({ ok: false, error: { code: "invalid_request" } });
    // The route refuses before anything crosses RPC.
    const res = await ctx.agentCall(ctx.path("free"), { method: "POST", body: `{"data":${"[".repeat(50_000)}${"]".repeat(50_000)}}`, contentType: "application/json" });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { details: unknown } }).error.details).toEqual({ field: "data", limit: 100 });
    // Rows of the collection still list, sort and filter.
    expect((await ctx.list("free", { q: { sort: [{ field: "deep" }], where: [{ field: "deep", op: "neq", value: 1 }] } })).rows).toEqual([]);
  });
});
