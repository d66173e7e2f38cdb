// Recording a consumer batch's webhook deliveries together (src/effects/webhooks/record.ts)
// keeps what recording them one by one guaranteed, in fewer D1 round trips: each source
// makes one delivery however often it comes, the app's hourly cap counts each new one in
// turn (and a redelivered one not again), and the first attempt of each new pending one
// is claimed for the caller alone. The round trips are counted on the real database
// through the fault-injection wrapper (a batch counts as one), the consumer's own among them
// (two before a batch's first send), as are the outcome writes
// that finish together (db/grouped-batch.ts), and the bound on sends (bounded.ts).
import { createExecutionContext, createMessageBatch, env, getQueueResult, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../../workers/relay";
import { holdEagerFlush } from "./hold-outbox";
import { call, claimedAgent, json, signIn } from "../helpers";
import { createDeliveries, type NewDelivery } from "../../../src/effects/webhooks/record";
import { webhookAttempts } from "../../../src/db/effects-schema";
import { groupedBatch } from "../../../src/db/grouped-batch";
import { db } from "../../../src/db/client";
import { limiter } from "../../../src/bounded";
import { failingDb } from "../faults/failing-db";

function inputs(appId: string, sources: string[]): NewDelivery[] {
  return sources.map((source) => ({
    appId, source, ruleId: "rule-1", collection: "notes", rowKey: source, op: "create", feedSeq: 1,
    url: "http://127.0.0.1:9/hook", connection: null, payload: "{}",
  }));
}

const capped = (cap: number) => ({ ...env, WEBHOOKS_APP_HOURLY_CAP: String(cap) }) as Env;

describe("recording webhook deliveries together", { timeout: 60_000 }, () => {
  it("counts each new delivery against the hourly cap in turn, a redelivered one not again, in two round trips", async () => {
    const appId = `app_${crypto.randomUUID()}`;
    const now = Date.now();
    const counted = failingDb(Infinity);
    const first = await createDeliveries({ ...capped(3), DB: counted.binding }, appId, inputs(appId, ["s1", "s2", "s2", "s3", "s4"]), { claim: true }, now);
    // One read of those made already, one batch of the count against the cap, the inserts and the claims.
    expect(counted.passed()).toBe(2);
    expect(first.map(({ delivery }) => delivery.source)).toEqual(["s1", "s2", "s2", "s3", "s4"]);
    expect(first[1].delivery.id).toBe(first[2].delivery.id);
    expect(first.map(({ delivery }) => delivery.status)).toEqual(["pending", "pending", "pending", "pending", "failed"]);
    expect(first[4].delivery).toMatchObject({ attempts: 0, error: "the app's hourly webhook cap (3) is reached", nextAttemptAt: null });
    // The new pending ones come back claimed: one attempt counted, leased.
    expect(first.map(({ claimed }) => claimed)).toEqual([true, true, true, true, false]);
    expect(first[0].delivery.attempts).toBe(1);
    expect(first[0].delivery.nextAttemptAt).toBeGreaterThan(now);

    // The same sources again (a redelivered batch) plus a new one: nothing made twice, nothing claimed again, only the new one counted.
    const again = await createDeliveries(capped(3), appId, inputs(appId, ["s1", "s4", "s5"]), { claim: true }, now);
    expect(again.map(({ delivery }) => delivery.id).slice(0, 2)).toEqual([first[0].delivery.id, first[4].delivery.id]);
    expect(again.map(({ claimed }) => claimed)).toEqual([false, false, false]);
    expect(again[2].delivery.status).toBe("failed");
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM webhook_deliveries WHERE app_id = ?1").bind(appId).first<{ n: number }>();
    expect(rows?.n).toBe(5);
    const hits = await env.DB.prepare("SELECT sum(hits) AS n FROM rate_limit_windows WHERE bucket = ?1").bind(`webhooks:${appId}`).first<{ n: number }>();
    expect(hits?.n).toBe(5);
  });

  it("without claim the deliveries stay unclaimed; a failed batch records none of them and counts none against the cap", async () => {
    const appId = `app_${crypto.randomUUID()}`;
    const plain = await createDeliveries(env, appId, inputs(appId, ["a", "b"]), { claim: false });
    expect(plain.map(({ claimed, delivery }) => [claimed, delivery.attempts, delivery.status])).toEqual([[false, 0, "pending"], [false, 0, "pending"]]);
    const hitsNow = async () => (await env.DB.prepare("SELECT sum(hits) AS n FROM rate_limit_windows WHERE bucket = ?1").bind(`webhooks:${appId}`).first<{ n: number | null }>())?.n ?? 0;
    const hitsBefore = await hitsNow();
    // Cut off at the batch of inserts: all or nothing.
    await expect(createDeliveries({ ...capped(10), DB: failingDb(1).binding }, appId, inputs(appId, ["c", "d"]), { claim: true })).rejects.toThrow(/injected fault/);
    const rows = await env.DB.prepare("SELECT source FROM webhook_deliveries WHERE app_id = ?1 ORDER BY source").bind(appId).all<{ source: string }>();
    expect(rows.results.map((row) => row.source)).toEqual(["a", "b"]);
    // The count against the cap is in the same batch: nothing counted for deliveries not recorded.
    expect(await hitsNow()).toBe(hitsBefore);
  });

  it("the consumer records a batch's webhook deliveries and claims their first attempts in two D1 round trips", async () => {
    const key = (await claimedAgent(await signIn())).api_key;
    const owned = { read: ["owner"], write: ["owner"], delete: ["owner"] };
    const manifest = { "x-service-manifest": { app: { name: "Two trips" }, collections: { issues: owned }, webhooks: [{ on: "create", collection: "issues", url: "http://127.0.0.1:9/hook" }] } };
    const app = await json<{ app_id: string }>(await call("/v1/apps", { key, json: { html: "<p>x</p>", manifest } }), 201);
    // Only the batch below hands the entries over: no flush on commit, no alarm.
    await holdEagerFlush(app.app_id);
    for (const title of ["one", "two", "three"]) await json(await call(`/v1/apps/${app.app_id}/collections/issues`, { key, json: { data: { title } } }), 201);
    const entries = await runInDurableObject(env.APP_STORE.get(env.APP_STORE.idFromName(app.app_id)), async (_instance, state) => {
      await state.storage.deleteAlarm();
      return state.storage.sql.exec<{ id: number; kind: string; rule_id: string }>("SELECT id, kind, rule_id FROM _svc_outbox ORDER BY id").toArray();
    });
    const pointers = entries.map((entry) => ({ outbox_id: `${app.app_id}:${entry.id}`, app_id: app.app_id, entry_id: Number(entry.id), kind: entry.kind, rule_id: entry.rule_id }));
    // A database that takes two statements and refuses the rest: the reads' batch and the record's batch are enough.
    const batch = createMessageBatch("relay-effects", pointers.map((body) => ({ id: body.outbox_id, timestamp: new Date(), attempts: 1, body })));
    const ctx = createExecutionContext();
    await worker.queue(batch, { ...env, DB: failingDb(2).binding } as Env, ctx);
    const result = await getQueueResult(batch, ctx);
    expect(result.retryMessages).toEqual([]);
    expect([...result.explicitAcks].sort()).toEqual(pointers.map((pointer) => pointer.outbox_id).sort());
    // Each recorded once with its first attempt claimed (its outcome write was refused: the sweep takes it up once the lease ends).
    const made = await env.DB.prepare("SELECT status, attempts FROM webhook_deliveries WHERE app_id = ?1").bind(app.app_id).all<{ status: string; attempts: number }>();
    expect(made.results).toEqual(pointers.map(() => ({ status: "pending", attempts: 1 })));
  });

  it("writes asked for in the same turn share one batch and each caller gets its own results; the limiter holds its bound", async () => {
    const counted = failingDb(Infinity);
    const d = db({ DB: counted.binding });
    const write = groupedBatch(d);
    const deliveryId = `whd_${crypto.randomUUID()}`;
    const row = (attempt: number) => d.insert(webhookAttempts).values({ deliveryId, attempt, at: new Date().toISOString(), responseStatus: 200, error: null, durationMs: 1 }).returning();
    const [first, second] = await Promise.all([write([row(1)]), write([row(2), row(3)])]);
    expect(counted.passed()).toBe(1);
    expect((first as Array<Array<{ attempt: number }>>).map(([inserted]) => inserted.attempt)).toEqual([1]);
    expect((second as Array<Array<{ attempt: number }>>).map(([inserted]) => inserted.attempt)).toEqual([2, 3]);

    const bound = limiter(3);
    let running = 0;
    let most = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    const pieces = Array.from({ length: 10 }, (_, index) => bound(async () => {
      running += 1;
      most = Math.max(most, running);
      if (index < 3) await gate;
      await Promise.resolve();
      running -= 1;
      return index;
    }));
    await Promise.resolve();
    expect(running).toBe(3);
    release();
    expect(await Promise.all(pieces)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(most).toBe(3);
  });
});
