// A connection on a real webhook delivery: a manifest rule names the connection, a row
// write fires it, and the receiver on 127.0.0.1 (test/support/webhook-receiver.ts) gets
// the connection's header beside the signature. A connection bound to another host is
// never sent: the attempt fails with the refusal in the journal and nothing arrives; a
// deleted connection does the same.
import { describe, expect, inject, it } from "vitest";
import { call, json } from "../helpers";
import { waitFor } from "../../support/wait";
import type { ReceivedRequest } from "../../support/webhook-receiver-types";
import { owner } from "../serve/helpers";
import { staticBody } from "./fixtures";

const receiver = inject("webhookReceiver");

interface Delivery {
  status: string;
  attempts: number;
  error: string | null;
}

async function hookedApp(inbox: string) {
  const who = await owner();
  const key = who.agent.api_key;
  const manifest = {
    "x-service-manifest": {
      app: { name: "Hooked" },
      collections: { notes: { read: ["owner"], write: ["owner"], delete: ["owner"] } },
      webhooks: [{ on: "create", collection: "notes", url: `${receiver}/hook/${inbox}`, connection: "crm" }],
    },
  };
  const app = await json<{ app_id: string }>(await call("/v1/apps", { key, json: { html: "<p>x</p>", manifest } }), 201);
  const path = `/v1/apps/${app.app_id}`;
  return {
    key, path,
    connect: (body: Record<string, unknown>) => call(`${path}/connections`, { key, json: body }),
    write: () => call(`${path}/collections/notes`, { key, json: { data: { text: "hello" } } }),
    deliveries: async () => (await json<{ deliveries: Delivery[] }>(await call(`${path}/webhooks/deliveries`, { key }), 200)).deliveries,
  };
}

async function log(inbox: string): Promise<ReceivedRequest[]> {
  return (await (await fetch(`${receiver}/log/${inbox}`)).json()) as ReceivedRequest[];
}

function inboxName(): string {
  return `conn-${crypto.randomUUID().slice(0, 8)}`;
}

describe("a webhook through a connection", { timeout: 60_000 }, () => {
  it("carries the connection's header to its allowed host", async () => {
    const inbox = inboxName();
    const app = await hookedApp(inbox);
    await json(await app.connect(staticBody({ allowedHost: "127.0.0.1", headerName: "X-Api-Key", headerValue: "crm-secret-value" })), 201);
    await json(await app.write(), 201);
    const [request] = await waitFor(async () => {
      const got = await log(inbox);
      return got.length > 0 ? got : null;
    }, { timeout: 30_000, interval: 100, message: "the delivery at the receiver" });
    expect(request.headers["x-api-key"]).toBe("crm-secret-value");
    expect(request.headers["x-service-signature"]).toMatch(/^t=\d+,v1=[0-9a-f]{64}/);
    const [delivery] = await waitFor(async () => {
      const list = await app.deliveries();
      return list[0]?.status === "delivered" ? list : null;
    }, { timeout: 10_000, interval: 100, message: "the delivery journaled as delivered" });
    expect(JSON.stringify(delivery)).not.toContain("crm-secret-value");
  });

  it("is refused for a host the connection is not bound to, and for a deleted connection: journaled, nothing sent", async () => {
    const inbox = inboxName();
    const app = await hookedApp(inbox);
    await json(await app.connect(staticBody({ allowedHost: "api.example.com", headerValue: "never-sent" })), 201);
    await json(await app.write(), 201);
    const [refused] = await waitFor(async () => {
      const list = await app.deliveries();
      return list[0]?.error ? list : null;
    }, { timeout: 30_000, interval: 100, message: "the refused attempt in the journal" });
    expect(refused.error).toBe('connection "crm" is bound to api.example.com and is never sent to 127.0.0.1');

    expect((await call(`${app.path}/connections/crm`, { key: app.key, method: "DELETE" })).status).toBe(204);
    await json(await app.write(), 201);
    await waitFor(async () => {
      const list = await app.deliveries();
      return list.length === 2 && list[0].error === 'connection "crm" does not exist';
    }, { timeout: 30_000, interval: 100, message: "the second refusal in the journal" });
    expect(await log(inbox)).toEqual([]);
  });
});
