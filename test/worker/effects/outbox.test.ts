// Every accepted write records the rules it triggers in the AppStore's outbox, in the
// same transaction; batches are silent by default (recorded as suppressed) unless
// emitEffects; the alarm hands the outbox to the effects queue.
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, claimedAgent, json, signIn } from "../helpers";

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
    await json(await call(B, { key, json: { data: { text: "one" } } }), 201);
    await json(await call(`${B}/batch`, { key, json: { rows: [{ data: { text: "quiet" } }] } }), 200);
    await json(await call(`${B}/batch`, { key, json: { rows: [{ data: { text: "loud" } }], emitEffects: true } }), 200);

    const recorded = (await outboxOf(app.app_id)).map((e) => ({ kind: e.kind, ...(JSON.parse(e.payload) as { data: { text: string }; suppressed: boolean }) }));
    expect(recorded.map((e) => [e.kind, e.data.text, e.suppressed])).toEqual([
      ["webhooks", "one", false], ["webhooks", "quiet", true], ["webhooks", "loud", false],
    ]);

    const stub = env.APP_STORE.get(env.APP_STORE.idFromName(app.app_id));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await outboxOf(app.app_id)).toEqual([]);
  });
});

describe("effects consumer", () => {
  it("acknowledges every message, well-formed or not, so nothing is redelivered forever", async () => {
    const { createMessageBatch, createExecutionContext, getQueueResult } = await import("cloudflare:test");
    const worker = (await import("../../../workers/relay")).default;
    const batch = createMessageBatch("relay-effects", [
      { id: "m1", timestamp: new Date(), attempts: 1, body: { outbox_id: "a:1", app_id: "a", kind: "webhooks", rule_id: "r", change: {} } },
      { id: "m2", timestamp: new Date(), attempts: 1, body: "garbage" },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env, ctx);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks.sort()).toEqual(["m1", "m2"]);
    expect(result.retryMessages).toEqual([]);
  });
});
