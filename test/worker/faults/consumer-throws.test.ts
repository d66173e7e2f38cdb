// Fault test (issue 16): an effects queue consumer whose batch throws or stops midway
// loses nothing. One app fires a webhook, a notification and an agent task on every
// create; its outbox entries are handed to the real consumer (the Worker's queue handler)
// as pointers, first with a database that fails from the start, then with one that fails
// after a few statements (a batch cut off midway, a different point each time), until
// every pointer was acknowledged. Each message is acknowledged only once its record
// exists, and retried otherwise; then the same pointers arrive again with the real
// database, as after a redelivery, and every entry still has exactly one webhook
// delivery, one set of notifications and one task.
import { createExecutionContext, createMessageBatch, env, getQueueResult, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../../workers/relay";
import { holdEagerFlush } from "../effects/hold-outbox";
import { call, claimedAgent, json, signIn } from "../helpers";
import { failingDb } from "./failing-db";

const owned = { read: ["owner"], write: ["owner"], delete: ["owner"] };
const manifest = {
  "x-service-manifest": {
    app: { name: "Faulty consumer" },
    collections: { issues: owned, summaries: owned },
    webhooks: [{ on: "create", collection: "issues", url: "http://127.0.0.1:9/hook" }],
    notify: [{ on: "create", collection: "issues", to: ["owner"], subject: "New: {{title}}", body: "An issue." }],
    agentTasks: [{ on: "create", collection: "issues", taskType: "triage", prompt: "Triage the issue.", reads: ["issues"], writes: ["summaries"] }],
  },
};

interface Pointer { outbox_id: string; app_id: string; entry_id: number; kind: string; rule_id: string }
const TABLE_OF: Record<string, string> = { webhooks: "webhook_deliveries", notify: "notifications", agentTasks: "agent_tasks" };

/** How many records an entry has in its engine's table. */
async function recordsOf(pointer: Pointer): Promise<number> {
  const row = await env.DB.prepare(`SELECT count(*) AS n FROM ${TABLE_OF[pointer.kind]} WHERE app_id = ?1 AND source = ?2`).bind(pointer.app_id, pointer.outbox_id).first<{ n: number }>();
  return row?.n ?? 0;
}

/** Hands `pointers` to the Worker's queue handler as one batch (message ids are the outbox ids) with `db` as the database. */
async function deliver(pointers: Pointer[], db: D1Database, round: number) {
  const batch = createMessageBatch("relay-effects", pointers.map((body) => ({ id: body.outbox_id, timestamp: new Date(), attempts: round, body })));
  const ctx = createExecutionContext();
  await worker.queue(batch, { ...env, DB: db } as Env, ctx);
  return getQueueResult(batch, ctx);
}

describe("faults: the effects consumer throws or is cut off midway", { timeout: 60_000 }, () => {
  it("retries what it could not record, acknowledges only what it did, and records each entry exactly once", async () => {
    const key = (await claimedAgent(await signIn())).api_key;
    const app = await json<{ app_id: string }>(await call("/v1/apps", { key, json: { html: "<p>x</p>", manifest } }), 201);
    // Only the batches below hand the entries over: no flush on commit, no alarm.
    await holdEagerFlush(app.app_id);
    for (const title of ["one", "two", "three"]) await json(await call(`/v1/apps/${app.app_id}/collections/issues`, { key, json: { data: { title } } }), 201);
    const stub = env.APP_STORE.get(env.APP_STORE.idFromName(app.app_id));
    const entries = await runInDurableObject(stub, async (_instance, state) => {
      await state.storage.deleteAlarm();
      return state.storage.sql.exec<{ id: number; kind: string; rule_id: string }>("SELECT id, kind, rule_id FROM _svc_outbox ORDER BY id").toArray();
    });
    expect(entries.map((entry) => entry.kind).sort()).toEqual(["agentTasks", "agentTasks", "agentTasks", "notify", "notify", "notify", "webhooks", "webhooks", "webhooks"]);
    const pointers: Pointer[] = entries.map((entry) => ({ outbox_id: `${app.app_id}:${entry.id}`, app_id: app.app_id, entry_id: Number(entry.id), kind: entry.kind, rule_id: entry.rule_id }));

    // A consumer whose database fails outright: every message retried, none acknowledged, nothing recorded.
    const down = await deliver(pointers, failingDb(0).binding, 1);
    expect(down.explicitAcks).toEqual([]);
    expect(down.retryMessages.map((message: { msgId: string }) => message.msgId).sort()).toEqual(pointers.map((pointer) => pointer.outbox_id).sort());
    for (const pointer of pointers) expect(await recordsOf(pointer)).toBe(0);

    // Cut off after a growing number of statements: what is acknowledged is recorded, the rest comes back.
    let pending = pointers;
    const cutOffs: number[] = [];
    for (let allowed = 2, round = 2; pending.length > 0 && round < 30; allowed += 3, round += 1) {
      const result = await deliver(pending, failingDb(allowed).binding, round);
      const acked = new Set(result.explicitAcks);
      const retried = new Set(result.retryMessages.map((message: { msgId: string }) => message.msgId));
      // Every message is answered one way or the other (none left to an implicit acknowledgement).
      for (const pointer of pending) expect(acked.has(pointer.outbox_id) !== retried.has(pointer.outbox_id), pointer.outbox_id).toBe(true);
      for (const pointer of pending.filter((candidate) => acked.has(candidate.outbox_id))) expect(await recordsOf(pointer), pointer.outbox_id).toBeGreaterThan(0);
      if (acked.size > 0 && retried.size > 0) cutOffs.push(allowed);
      pending = pending.filter((pointer) => retried.has(pointer.outbox_id));
    }
    expect(pending).toEqual([]);
    // At least one batch was really cut midway: some of it recorded, some retried.
    expect(cutOffs.length).toBeGreaterThan(0);

    const counts = await Promise.all(pointers.map(recordsOf));
    // One delivery per webhook entry, one notification (the owner, one channel) and one task per create.
    expect(counts).toEqual(pointers.map(() => 1));

    // The same pointers again with the real database (a redelivery after the failures): acknowledged, nothing doubled.
    const again = await deliver(pointers, env.DB, 40);
    expect(again.explicitAcks.sort()).toEqual(pointers.map((pointer) => pointer.outbox_id).sort());
    expect(again.retryMessages).toEqual([]);
    expect(await Promise.all(pointers.map(recordsOf))).toEqual(counts);
    expect(await runInDurableObject(stub, (_instance, state) => state.storage.sql.exec("SELECT id FROM _svc_outbox").toArray())).toEqual([]);
  });
});
