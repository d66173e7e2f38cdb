// An agent key's lookup is reused for a few seconds on the collection endpoints, and the
// app's store re-judges every call made with it (withdrawals.ts, agent-key-cache.ts). These
// tests warm the reused lookup with a write, change something, and show the very next
// request already sees the change — a paused agent, revoked or rotated keys, a trashed or
// transferred app, a redeploy — with nothing written. They also stage the race the store
// closes for every caller: a change stored after the Worker's check, reported to the store
// before the write lands. A lookup in use is read again ahead of its end, off the
// request's path.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectError, json, signIn } from "../helpers";
import { COLLECTIONS, manifestOf, setup, type Ctx } from "./fixtures";
import { accept, mailedToken } from "../account/fixtures";
import { AGENT_LOOKUP_REFRESH_AFTER_MS, AGENT_LOOKUP_REUSE_MS, forgetAgentLookup, reusableAgentLookup } from "../../../src/auth/agent-key-cache";
import { stageWithdrawal } from "../withdrawals";
import { appStore } from "../../../src/apps/store";
import { clockPast } from "../../support/wait";
import { countingD1 } from "../counting-d1";

const note = (i: number) => ({ title: `note ${i}` });
/** The app's store, called directly as the Worker would (typed by its RPC surface). */
const store = (ctx: Ctx) => appStore(env, ctx.appId);
const emptyForm = { body: "", contentType: "application/x-www-form-urlencoded" };

/** A context whose agent key lookup for its app is reused from now on (a write warmed it). */
async function warmed(): Promise<Ctx> {
  const ctx = await setup();
  await ctx.create("tasks", note(0));
  await ctx.create("tasks", note(1));
  return ctx;
}

async function rowCount(ctx: Ctx): Promise<number> {
  return ctx.sql((sql) => Number(sql.exec<{ n: number }>("SELECT count(*) AS n FROM _svc_rows").one().n));
}

const recordWithdrawal = (ctx: Ctx, at: number, selector: Record<string, string> | null) => stageWithdrawal(ctx.appId, at, selector);

describe("a reused agent key lookup never outlives a change", () => {
  for (const [what, change, code] of [
    ["pausing the agent", (ctx: Ctx) => call(`/v1/self/agents/${ctx.agent.agent_id}/pause`, { method: "POST", session: ctx.human.session }), "invalid_api_key"],
    ["revoking its keys", (ctx: Ctx) => call(`/v1/self/agents/${ctx.agent.agent_id}/revoke-key`, { method: "POST", session: ctx.human.session }), "invalid_api_key"],
    ["rotating its key", (ctx: Ctx) => call(`/v1/self/agents/${ctx.agent.agent_id}/rotate-key`, { method: "POST", session: ctx.human.session }), "invalid_api_key"],
    // The console's buttons store the same change and must report it the same way.
    ["pausing the agent from the console", (ctx: Ctx) => call(`/console/agents/${ctx.agent.agent_id}/pause`, { method: "POST", session: ctx.human.session, ...emptyForm }), "invalid_api_key"],
    ["revoking its keys from the console", (ctx: Ctx) => call(`/console/agents/${ctx.agent.agent_id}/revoke-key`, { method: "POST", session: ctx.human.session, ...emptyForm }), "invalid_api_key"],
  ] as const) {
    it(`${what}: the next write answers 401 and writes nothing`, async () => {
      const ctx = await warmed();
      const before = await rowCount(ctx);
      expect([200, 201, 303]).toContain((await change(ctx)).status);
      for (let i = 0; i < 3; i++) {
        const err = await expectError(await ctx.agentCall(ctx.path("tasks"), { json: { data: note(2 + i) } }), 401, code);
        expect(err.details?.reason).toMatch(/^(paused|revoked)$/);
      }
      await expectError(await ctx.agentCall(ctx.path("tasks")), 401, code);
      expect(await rowCount(ctx)).toBe(before);
    });
  }

  it("trashing the app: the next write is soft_deleted, nothing written", async () => {
    const ctx = await warmed();
    const before = await rowCount(ctx);
    await json(await ctx.ownerCall(`/v1/apps/${ctx.appId}`, { method: "DELETE" }), 200);
    await expectError(await ctx.agentCall(ctx.path("tasks"), { json: { data: note(9) } }), 410, "soft_deleted");
    expect(await rowCount(ctx)).toBe(before);
  });

  it("trashing and purging at once: the next write finds no app, and the purged store stays empty", async () => {
    const ctx = await warmed();
    await json(await ctx.ownerCall(`/v1/apps/${ctx.appId}`, { method: "DELETE" }), 200);
    await json(await ctx.ownerCall(`/v1/apps/${ctx.appId}/purge`, { method: "POST" }), 200);
    for (const path of [ctx.path("tasks"), ctx.path("tasks", "/count")]) {
      await expectError(await ctx.agentCall(path, path.endsWith("/count") ? {} : { json: { data: note(9) } }), 404, "app_not_found");
    }
    expect(await ctx.sql((sql) => sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf%' ESCAPE '\\'").toArray())).toEqual([]);
    // Even a call that reaches the purged store directly is refused, not served from new tables.
    const answer = await store(ctx).countRows({ appId: ctx.appId, version: 1, principal: { kind: "agent", agentId: ctx.agent.agent_id }, checkedAt: Date.now() }, "tasks");
    expect(answer).toMatchObject({ ok: false, error: { code: "app_not_found" } });
  });

  it("transferring the app: the previous owner's agent finds no app at once", async () => {
    const ctx = await warmed();
    const before = await rowCount(ctx);
    const recipient = await signIn();
    await json(await ctx.agentCall(`/v1/apps/${ctx.appId}/transfer`, { json: { email: recipient.email, keep_as_member: false } }), 201);
    const token = await mailedToken(recipient.email, "transfer");
    expect((await accept(recipient, token)).status).toBe(200);
    await expectError(await ctx.agentCall(ctx.path("tasks"), { json: { data: note(9) } }), 404, "app_not_found");
    expect(await rowCount(ctx)).toBe(before);
  });

  it("a redeploy: the next write is judged by the new schema", async () => {
    const ctx = await warmed();
    // Version 2 gives tasks the product schema: a title alone no longer passes.
    const stricter = manifestOf({ ...COLLECTIONS, tasks: { schema: { $ref: "#/$defs/Product" }, read: ["owner"], write: ["owner"], delete: ["owner"] } });
    const res = await call(`/v1/apps/${ctx.appId}/versions`, { key: ctx.key, json: { manifest: stricter, force: true } });
    expect(res.status).toBe(200);
    await expectError(await ctx.agentCall(ctx.path("tasks"), { json: { data: note(2) } }), 422, "row_schema_violation");
    expect((await ctx.create("tasks", { name: "ok" })).data).toEqual({ name: "ok" });
  });
});

describe("the store re-judges a call checked before a change it has heard of", () => {
  it("a key revoked in D1 after the Worker's check: the call is checked again and refused, nothing written", async () => {
    const ctx = await warmed();
    const before = await rowCount(ctx);
    // The change lands in D1 and reaches the store, but this isolate's lookup predates it.
    await env.DB.prepare("UPDATE agent_keys SET revoked_at = ?1 WHERE agent_id = ?2").bind(new Date().toISOString(), ctx.agent.agent_id).run();
    await recordWithdrawal(ctx, Date.now(), { agentId: ctx.agent.agent_id });
    await expectError(await ctx.agentCall(ctx.path("tasks"), { json: { data: note(2) } }), 401, "invalid_api_key");
    expect(await rowCount(ctx)).toBe(before);
  });

  it("a withdrawal that changed nothing for this caller: checked again, then written once", async () => {
    const ctx = await warmed();
    const before = await rowCount(ctx);
    const withdrawnAt = Date.now();
    await recordWithdrawal(ctx, withdrawnAt, null);
    // The fresh check must come after it, not in the same millisecond (which counts as before).
    await clockPast(withdrawnAt);
    const row = await ctx.create("tasks", note(2));
    expect(row.data).toEqual(note(2));
    expect(await rowCount(ctx)).toBe(before + 1);
    // Someone else's withdrawal is not this caller's.
    await recordWithdrawal(ctx, Date.now() + 60_000, { agentId: "someone-else" });
    await ctx.create("tasks", note(3));
    expect(await rowCount(ctx)).toBe(before + 2);
  });

  it("access that keeps changing within the request answers 409 conflict to send again, nothing written", async () => {
    const ctx = await warmed();
    const before = await rowCount(ctx);
    // Recorded ahead of any check this request can make: the resend is turned away too.
    await recordWithdrawal(ctx, Date.now() + 30_000, { agentId: ctx.agent.agent_id });
    const err = await expectError(await ctx.agentCall(ctx.path("tasks"), { json: { data: note(2) } }), 409, "conflict");
    expect(err.details).toEqual({ reason: "access_changed" });
    expect(await rowCount(ctx)).toBe(before);
  });

  it("a call checked longer ago than the store remembers is checked again, whatever happened meanwhile", async () => {
    const ctx = await warmed();
    const principal = { kind: "agent" as const, agentId: ctx.agent.agent_id };
    const old = await store(ctx).countRows({ appId: ctx.appId, version: 1, principal, checkedAt: Date.now() - 61_000 }, "tasks");
    expect(old).toMatchObject({ ok: false, error: { code: "conflict", details: { reason: "access_changed" } } });
    expect(await store(ctx).countRows({ appId: ctx.appId, version: 1, principal, checkedAt: Date.now() - 1_000 }, "tasks")).toEqual({ ok: true, value: 2 });
  });

  it("after a redeploy the store never goes back to the older version, checked call or not", async () => {
    const ctx = await warmed();
    const stricter = manifestOf({ ...COLLECTIONS, tasks: { schema: { $ref: "#/$defs/Product" }, read: ["owner"], write: ["owner"], delete: ["owner"], unique: ["name"] } });
    expect((await call(`/v1/apps/${ctx.appId}/versions`, { key: ctx.key, json: { manifest: stricter, force: true } })).status).toBe(200);
    await ctx.create("tasks", { name: "Only" });
    const principal = { kind: "agent" as const, agentId: ctx.agent.agent_id };
    const before = await ctx.snapshot();
    for (const call of [{ appId: ctx.appId, version: 1, principal }, { appId: ctx.appId, version: 1, principal, checkedAt: Date.now() }]) {
      const answer = await store(ctx).createRow(call, "tasks", { data: { title: "version 1 shape" } });
      expect(answer).toMatchObject({ ok: false, error: { code: "conflict", details: { reason: "access_changed" } } });
    }
    // Nothing written, and version 2's unique index is intact.
    expect(await ctx.snapshot()).toEqual(before);
    await expectError(await ctx.agentCall(ctx.path("tasks"), { json: { data: { name: "only" } } }), 409, "unique_conflict");
  });

  it("an owner's session call and a fresh agent lookup are re-judged the same way", async () => {
    const ctx = await warmed();
    forgetAgentLookup(ctx.key, ctx.appId);
    await recordWithdrawal(ctx, Date.now() + 30_000, null);
    for (const who of ["owner", "agent"] as const) {
      const err = await expectError(await ctx.as(who)(ctx.path("tasks"), { json: { data: note(2) } }), 409, "conflict");
      expect(err.details).toEqual({ reason: "access_changed" });
    }
  });
});

describe("a lookup in use is read again before it runs out", () => {
  it("after the request that finds it near its end, once at a time, so a steady writer never waits on D1; a refusal found then drops it", async () => {
    const ctx = await setup();
    const d1 = countingD1();
    const background: Promise<unknown>[] = [];
    const start = Date.now();
    const lookup = (at: number) => reusableAgentLookup({ DB: d1.DB }, ctx.agent.api_key, ctx.appId, (work) => background.push(work), at);

    expect((await lookup(start)).found.ok).toBe(true);
    const firstReads = d1.roundTrips();
    expect(firstReads).toBeGreaterThan(0);
    // Young: reused, nothing read.
    expect((await lookup(start + 1_000)).checkedAt).toBe(start);
    expect([d1.roundTrips(), background.length]).toEqual([firstReads, 0]);
    // Near its end: still answered from the kept lookup, and read again after the request, once.
    expect((await lookup(start + AGENT_LOOKUP_REFRESH_AFTER_MS)).checkedAt).toBe(start);
    expect((await lookup(start + AGENT_LOOKUP_REFRESH_AFTER_MS + 1)).checkedAt).toBe(start);
    expect(background).toHaveLength(1);
    await Promise.all(background);
    // Past the first read's end the fresh one serves, counted from when it began: no read on the way.
    const refreshedReads = d1.roundTrips();
    expect(refreshedReads).toBeGreaterThan(firstReads);
    const later = start + AGENT_LOOKUP_REUSE_MS + 500;
    expect((await lookup(later)).checkedAt).toBe(start + AGENT_LOOKUP_REFRESH_AFTER_MS);
    expect(d1.roundTrips()).toBe(refreshedReads);

    // The agent is paused; the next read ahead finds it refused and keeps nothing, so the request after reads the refusal.
    await json(await call(`/v1/self/agents/${ctx.agent.agent_id}/pause`, { method: "POST", session: ctx.human.session }), 200);
    const nearEnd = start + AGENT_LOOKUP_REFRESH_AFTER_MS * 2 + 1;
    expect((await lookup(nearEnd)).found.ok).toBe(true);
    expect(background).toHaveLength(2);
    await Promise.all(background);
    const after = await lookup(nearEnd + 1);
    expect(after.found).toMatchObject({ ok: false, reason: "paused" });
    expect(after.checkedAt).toBe(nearEnd + 1);
  });
});
