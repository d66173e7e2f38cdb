// The store's due work (alarms.ts): a commit hands its effects to the queue at once and the
// flush is still due within a second as a safety net; each job records when it must run next, the one alarm
// is set for the earliest, a failing job comes back on its own after a growing delay while
// the others still run, a wake of the store re-arms whatever is still due, and an outbox
// the queue refuses stays, its attempts counted, until a later flush succeeds; entries go
// to the queue as pointers however large, and come back if never settled.
import { env, runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DueWork } from "../alarms";
import { flushOutbox, REQUEUE_AFTER_MS } from "../outbox";
import { setup, manifestOf, type Ctx } from "../../../test/worker/rows/fixtures";
import { waitFor } from "../../../test/support/wait";

const withWebhook = {
  ...manifestOf({ notes: { read: ["owner"], write: ["owner"], delete: ["owner"] } }),
};
(withWebhook["x-service-manifest"] as Record<string, unknown>).webhooks = [{ on: "create", collection: "notes", url: "http://127.0.0.1:9/hook" }];

type DueRow = { job: string; at: number; failures: number };

const payload = (data: string) => JSON.stringify({ seq: 1, op: "create", collection: "notes", key: "k", version: 1, data, suppressed: false });

function dueRows(ctx: Ctx): Promise<DueRow[]> {
  return ctx.sql((sql) => sql.exec<DueRow>("SELECT job, at, failures FROM _svc_due ORDER BY job").toArray().map((row) => ({ ...row, at: Number(row.at), failures: Number(row.failures) })));
}

describe("due work", () => {
  it("a write that records an effect is handed to the queue at once, with the alarm set within a second as the safety net", async () => {
    const ctx = await setup(withWebhook);
    const before = Date.now();
    await ctx.create("notes", { text: "one" });
    const [flush] = (await dueRows(ctx)).filter((row) => row.job === "flush");
    expect(flush.at).toBeGreaterThanOrEqual(before + 1_000);
    expect(flush.at).toBeLessThanOrEqual(Date.now() + 1_000);
    // Take the alarm away: the entry still reaches the queue, handed over by the commit
    // itself, and the consumer settles it.
    const alarm = await ctx.sql(async (_, __, state) => {
      const set = await state.storage.getAlarm();
      await state.storage.deleteAlarm();
      return set;
    });
    expect(alarm).not.toBeNull();
    expect(alarm!).toBeLessThanOrEqual(flush.at);
    await waitFor(() => ctx.sql((sql) => sql.exec("SELECT id FROM _svc_outbox").toArray().length === 0), { timeout: 15_000, message: "the consumer settled the entry without the alarm" });
    // The safety net, when it rings, finds nothing left and the flush is no longer due.
    await ctx.sql((_, __, state) => state.storage.setAlarm(Date.now() + 3_600_000));
    expect(await runDurableObjectAlarm(ctx.stub())).toBe(true);
    expect((await dueRows(ctx)).map((row) => row.job)).not.toContain("flush");
  }, 30_000);

  it("a job that throws comes back after a delay that doubles per failure, without holding up the others, and a success clears its count", async () => {
    const ctx = await setup(withWebhook);
    const ran: string[] = [];
    // One ring with a failing flush; answers the due rows and the alarm it set, then takes
    // the alarm away so the platform does not ring it for real meanwhile.
    const failingRing = () => ctx.sql(async (sql, __, state) => {
      await new DueWork(state.storage).ring({
        flush: () => { throw new Error("the queue is down"); },
        sweep: () => { ran.push("sweep"); return null; },
        expiry: () => { ran.push("expiry"); return null; },
      });
      const alarm = await state.storage.getAlarm();
      await state.storage.deleteAlarm();
      const rows = sql.exec<DueRow>("SELECT job, at, failures FROM _svc_due").toArray().map((row) => ({ ...row, at: Number(row.at), failures: Number(row.failures) }));
      return { alarm, rows };
    });
    const first = Date.now();
    const once = await failingRing();
    expect(once.rows).toEqual([{ job: "flush", at: expect.any(Number), failures: 1 }]);
    expect(once.rows[0].at - first).toBeGreaterThanOrEqual(1_000);
    expect(once.rows[0].at - Date.now()).toBeLessThanOrEqual(1_000);
    expect(once.alarm).toBe(once.rows[0].at);
    expect(ran).toEqual(["sweep", "expiry"]);

    const second = Date.now();
    const twice = await failingRing();
    expect(twice.rows).toEqual([{ job: "flush", at: expect.any(Number), failures: 2 }]);
    expect(twice.rows[0].at - second).toBeGreaterThanOrEqual(2_000);

    await ctx.sql((_, __, state) => new DueWork(state.storage).ring({ flush: () => null, sweep: () => null, expiry: () => null }));
    expect(await dueRows(ctx)).toEqual([]);
  });

  it("a wake of the store sets the alarm again for work still due, even after an alarm was lost", async () => {
    const ctx = await setup(withWebhook);
    await ctx.create("notes", { text: "one" });
    const [flush] = await dueRows(ctx);
    expect(flush.job).toBe("flush");
    await ctx.sql(async (_, instance, state) => {
      await state.storage.deleteAlarm();
      // A fresh instance over the same storage, as after eviction: its constructor re-arms.
      const Store = instance.constructor as new (state: DurableObjectState, env: Env) => unknown;
      new Store(state, env);
    });
    // Set again no later than the flush was due; or, when the entry was still unsettled (the
    // new instance hands it over again at once), already rung with the outbox settled.
    await waitFor(() => ctx.sql(async (sql, __, state) => {
      const alarm = await state.storage.getAlarm();
      const waiting = sql.exec("SELECT id FROM _svc_outbox").toArray().length;
      return (alarm !== null && alarm <= flush.at) || waiting === 0;
    }), { timeout: 15_000, message: "the alarm is set again, or the work it was for is done" });
  });

  it("a change far past the queue's 128 KB message limit is handed over as a pointer the real queue accepts", async () => {
    const ctx = await setup(withWebhook);
    await ctx.list("notes"); // the store learns which app it is
    await ctx.sql(async (sql, __, state) => {
      sql.exec("INSERT INTO _svc_outbox (kind, rule_id, payload, created_at) VALUES ('webhooks', 'w0', ?, ?)", payload("x".repeat(200_000)), new Date().toISOString());
      await state.storage.setAlarm(Date.now() + 3_600_000);
    });
    expect(await runDurableObjectAlarm(ctx.stub())).toBe(true);
    const entries = await ctx.sql((sql) => sql.exec<{ attempts: number }>("SELECT attempts FROM _svc_outbox").toArray());
    expect(entries.map((entry) => Number(entry.attempts)).filter((attempts) => attempts > 0)).toEqual([]);
  });

  it("an outbox the queue refuses stays, counts the attempt, comes back later, and is handed over again once accepted", async () => {
    const ctx = await setup(withWebhook);
    await ctx.list("notes");
    await ctx.sql(async (sql, __, state) => {
      sql.exec("INSERT INTO _svc_outbox (kind, rule_id, payload, created_at) VALUES ('webhooks', 'w0', ?, ?)", payload("fits"), new Date().toISOString());
      await state.storage.setAlarm(Date.now() + 3_600_000);
    });
    // A queue that refuses every send (a stand-in for an outage; the real queue is used below).
    const refusing = { sendBatch: async () => { throw new Error("queue unavailable"); } } as unknown as Queue;
    const before = Date.now();
    const retryAt = await ctx.sql((sql) => flushOutbox(sql, refusing, "app-x"));
    expect(retryAt! - before).toBeGreaterThanOrEqual(2_000);
    const [entry] = await ctx.sql((sql) => sql.exec<{ attempts: number; queued_at: number | null }>("SELECT attempts, queued_at FROM _svc_outbox").toArray());
    expect({ attempts: Number(entry.attempts), queued_at: entry.queued_at }).toEqual({ attempts: 1, queued_at: null });
    // The real queue takes it; an entry handed over but never settled is handed over again after REQUEUE_AFTER_MS.
    const accepted = Date.now();
    const requeueAt = await ctx.sql((sql) => flushOutbox(sql, env.EFFECTS, "app-x", accepted));
    expect(requeueAt).toBe(accepted + REQUEUE_AFTER_MS);
    const later = accepted + REQUEUE_AFTER_MS;
    const again = await ctx.sql((sql) => flushOutbox(sql, env.EFFECTS, "app-x", later));
    expect(again).toBe(later + REQUEUE_AFTER_MS);
  });

  it("hands over 100 entries a pass and marks each pass, its statements binding the ids as one parameter (held to Cloudflare's 100 in development mode)", async () => {
    const ctx = await setup(withWebhook);
    await ctx.list("notes");
    await ctx.sql(async (sql, __, state) => {
      for (let i = 0; i < 200; i++) {
        sql.exec("INSERT INTO _svc_outbox (kind, rule_id, payload, created_at) VALUES ('webhooks', 'w0', ?, ?)", payload(`entry ${i}`), new Date().toISOString());
      }
      await state.storage.setAlarm(Date.now() + 3_600_000);
    });
    // A queue that only counts what it is handed.
    const sent: number[] = [];
    const counting = { sendBatch: async (messages: unknown[]) => { sent.push(messages.length); } } as unknown as Queue;
    await ctx.sql((sql) => flushOutbox(sql, counting, "app-x"));
    expect(sent).toEqual([100, 100]);
    const unmarked = await ctx.sql((sql) => sql.exec<{ n: number }>("SELECT count(*) AS n FROM _svc_outbox WHERE queued_at IS NULL").one().n);
    expect(unmarked).toBe(0);
  });
});
