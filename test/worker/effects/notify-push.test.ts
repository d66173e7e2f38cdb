// Push notifications end to end. Through the real parts first: a row write on a public
// offline app whose rule has the push channel reaches the owner's subscribed browser —
// whose endpoint is the loopback receiver (development allows plain-http loopback push
// endpoints, CONTRACT §3) — as a VAPID-signed aes128gcm request, and a push service that
// answers 410 makes the relay delete that subscription. Then the digest's push through the
// transport a test can hand it (sendPush's `send` parameter): two notifications decrypt to
// one push carrying the app's name, a line naming the collection and the rule's link, and
// no row data (the rows it names exist: the digest checks their readers again).
import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { waitFor } from "../../support/wait";
import { call, json } from "../helpers";
import type { ReceivedRequest } from "../../support/webhook-receiver-types";
import { create, deployNotify, notifyManifest, personKey, recordedFor, type NotifyApp } from "./notify-fixtures";
import { browser, pushService, relayPublicKey, rowFor, saved } from "./push-service";
import { config } from "../../../src/config";
import { parseManifest, manifestLimitsFrom } from "../../../src/manifest";
import { recordNotifications } from "../../../src/effects/notify/fire";
import { runDigest } from "../../../src/effects/notify/digests";

const receiver = inject("webhookReceiver");
const NOTES = { read: ["member"], write: ["member"], delete: ["owner"] };
const WAIT = { timeout: 30_000, interval: 100 };

function pushApp(): Promise<NotifyApp> {
  return deployNotify(notifyManifest({ notes: NOTES }, [
    { on: "create", collection: "notes", to: ["owner"], channels: ["push"], subject: "Secret {{title}}", body: "{{title}} inside", link: "/notes" },
    { on: "create", collection: "notes", to: ["owner"], subject: "Mail {{title}}", body: "Mail {{title}}" },
  ], { offline: true }), "public");
}

async function pushRecord(t: NotifyApp, rowKey: string) {
  return (await recordedFor(t.app.app_id, rowKey)).find((row) => row.channel === "push");
}

async function receivedAt(name: string): Promise<ReceivedRequest[]> {
  return waitFor(async () => {
    const log = (await (await fetch(`${receiver}/log/${name}`)).json()) as ReceivedRequest[];
    return log.length > 0 ? log : null;
  }, { ...WAIT, message: `a push at ${name}` });
}

describe("notify: push", { timeout: 60_000 }, () => {
  it("a write pushes to the recipient's subscribed browser through the queue; a 410 deletes the subscription", async () => {
    const t = await pushApp();
    const name = `push-${crypto.randomUUID().slice(0, 8)}`;
    const who = await browser(`${receiver}/hook/${name}`);
    await saved(t.who.human, who);

    const key = await create(t, "notes", { title: "launch codes" });
    const [request] = await receivedAt(name);
    expect(request.method).toBe("POST");
    expect(request.headers["content-encoding"]).toBe("aes128gcm");
    expect(request.headers.authorization).toMatch(/^vapid t=[\w-]+\.[\w-]+\.[\w-]+, k=[\w-]+$/);
    expect(request.headers.authorization).toContain(await relayPublicKey(t.who.human));
    expect(request.body).not.toContain("launch codes");
    await waitFor(async () => (await pushRecord(t, key))?.status === "sent", { ...WAIT, message: "the push recorded as sent" });

    const fresh = await fetch(`${receiver}/control/${name}`, { method: "POST", body: JSON.stringify({ status: 410 }) });
    expect(fresh.status).toBe(204);
    const gone = await create(t, "notes", { title: "second" });
    const record = await waitFor(async () => {
      const row = await pushRecord(t, gone);
      return row?.status === "failed" ? row : null;
    }, { ...WAIT, message: "the push to a gone subscription recorded as failed" });
    expect(record).toEqual({ recipient: personKey(t.who.human), channel: "push", status: "failed", reason: "every subscription of the recipient is gone" });
    expect(await rowFor(who.target.endpoint)).toBeNull();

    // With no subscribed browser left, no push is held for the owner; the mail rule still fires.
    const none = await create(t, "notes", { title: "third" });
    // Its mail going out (a digest window later) is the sign that both of its entries were handled.
    await waitFor(async () => (await recordedFor(t.app.app_id, none))[0]?.status === "sent", { ...WAIT, message: "the third write's mail sent" });
    expect((await recordedFor(t.app.app_id, none)).map((row) => row.channel)).toEqual(["email"]);
  });

  it("a digest's push decrypts to the app's name, a line naming the collection and the link, never the row", async () => {
    const t = await pushApp();
    // Nothing listens on port 9: should the queue's own digest message ever find these held, nothing is reached.
    const who = await browser(`http://127.0.0.1:9/push/${crypto.randomUUID()}`);
    await saved(t.who.human, who);
    const service = pushService(who, await relayPublicKey(t.who.human));
    const versionRow = await env.DB.prepare("SELECT manifest_json FROM app_versions WHERE app_id = ?1").bind(t.app.app_id).first<{ manifest_json: string }>();
    const ruleId = parseManifest(JSON.parse(versionRow!.manifest_json), manifestLimitsFrom(config(env))).notify[0].id;
    const at = new Date().toISOString();
    // The rows exist (written in a quiet batch, which fires nothing): the digest checks again that the owner may read them.
    const rows = [{ key: "k1", data: { title: "launch codes" } }, { key: "k2", data: { title: "vault combination" } }];
    expect((await json<{ ok_count: number }>(await call(`${t.rows("notes")}/batch`, { key: t.key, json: { rows } }), 200)).ok_count).toBe(2);
    for (const [n, title] of [[1, "launch codes"], [2, "vault combination"]] as const) {
      const change = {
        seq: n, op: "create" as const, collection: "notes", key: `k${n}`, version: 1, data: { title }, author: { kind: "agent" as const, id: t.who.agent.agent_id },
        created_at: at, ts: at, suppressed: false,
      };
      expect(await recordNotifications(env, t.app.app_id, `${t.app.app_id}:test-${n}`, ruleId, change)).toBe(1);
    }
    // Due now: the window is not waited for.
    await runDigest(env, { appId: t.app.app_id, channel: "push", recipient: personKey(t.who.human) }, { now: Date.now() + 60_000, transport: { push: service.send } });

    expect(service.received).toHaveLength(1);
    expect(service.received[0].payload).toEqual({ title: "Notes & Co", body: "2 changes in notes", link: "/notes" });
    expect(JSON.stringify(service.received[0].payload)).not.toMatch(/launch|vault|Secret/);
    expect((await pushRecord(t, "k1"))?.status).toBe("sent");
    expect((await pushRecord(t, "k2"))?.status).toBe("sent");
  });
});
