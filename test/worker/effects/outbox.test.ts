// Every accepted write records the rules it triggers in the AppStore's outbox, in the
// same transaction; batches are silent by default (recorded as suppressed) unless
// emitEffects; the alarm hands the queue a pointer to each entry, and the consumer settles
// each once its work is recorded.
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { holdEagerFlush } from "./hold-outbox";
import { call, claimedAgent, json, signIn } from "../helpers";
import { waitFor } from "../../support/wait";

const manifest = {
  "x-service-manifest": {
    app: { name: "Effects" },
    collections: { notes: { read: ["owner"], write: ["owner"], delete: ["owner"] } },
    webhooks: [{ on: "create", collection: "notes", url: "http://127.0.0.1:9/hook" }],
  },
};

type Outbox = { kind: string; payload: string }[];

async function outboxOf(appId: string): Promise<Outbox> {
  const stub = env.APP_STORE.get(env.APP_STORE.idFromName(appId));
  return runInDurableObject(stub, (_instance, state) => state.storage.sql.exec<{ kind: string; payload: string }>("SELECT kind, payload FROM _svc_outbox ORDER BY id").toArray());
}

describe("outbox", () => {
  it("records matching rules with each write, suppresses batch effects by default, and flushes on the alarm", async () => {
    const key = (await claimedAgent(await signIn())).api_key;
    const app = await json<{ app_id: string }>(await call("/v1/apps", { key, json: { html: "<p>x</p>", manifest } }), 201);
    const B = `/v1/apps/${app.app_id}/collections/notes`;
    // Only the alarm flushes here, so the entries can be read first.
    await holdEagerFlush(app.app_id);
    await json(await call(B, { key, json: { data: { text: "one" } } }), 201);
    await json(await call(`${B}/batch`, { key, json: { rows: [{ data: { text: "quiet" } }] } }), 200);
    await json(await call(`${B}/batch`, { key, json: { rows: [{ data: { text: "loud" } }], emitEffects: true } }), 200);

    const recorded = (await outboxOf(app.app_id)).map((e) => ({ kind: e.kind, ...(JSON.parse(e.payload) as { data: { text: string }; suppressed: boolean }) }));
    expect(recorded.map((e) => [e.kind, e.data.text, e.suppressed])).toEqual([
      ["webhooks", "one", false], ["webhooks", "quiet", true], ["webhooks", "loud", false],
    ]);

    const stub = env.APP_STORE.get(env.APP_STORE.idFromName(app.app_id));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    // Handed over as pointers; the consumer settles each entry once its delivery (or its silence) is recorded.
    await waitFor(async () => (await outboxOf(app.app_id)).length === 0, { timeout: 15_000, message: "the consumer settled the outbox" });
    const journal = await env.DB.prepare("SELECT count(*) AS n FROM webhook_deliveries WHERE app_id = ?1").bind(app.app_id).first<{ n: number }>();
    expect(journal!.n).toBe(2);
  }, 30_000);
});

describe("effects consumer", () => {
  it("acknowledges a pointer to a settled entry, an attempt of an unknown delivery and a malformed message, so nothing is redelivered forever", async () => {
    const { createMessageBatch, createExecutionContext, getQueueResult } = await import("cloudflare:test");
    const worker = (await import("../../../workers/relay")).default;
    const batch = createMessageBatch("relay-effects", [
      { id: "m1", timestamp: new Date(), attempts: 1, body: { outbox_id: "a:1", app_id: "a", entry_id: 1, kind: "webhooks", rule_id: "r" } },
      { id: "m2", timestamp: new Date(), attempts: 1, body: "garbage" },
      { id: "m3", timestamp: new Date(), attempts: 1, body: { type: "webhook_attempt", delivery_id: "whd_unknown" } },
      { id: "m4", timestamp: new Date(), attempts: 1, body: { outbox_id: "a:2", app_id: "a", entry_id: "2", kind: "webhooks", rule_id: "r" } },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env, ctx);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks.sort()).toEqual(["m1", "m2", "m3", "m4"]);
    expect(result.retryMessages).toEqual([]);
  });
});
