// Outbound webhooks end to end, through the real parts: a row write records the rule in
// the AppStore's outbox, the alarm hands a pointer to the real queue, the consumer makes
// a delivery in the D1 journal and POSTs it to a receiver on 127.0.0.1 (test/support/
// webhook-receiver.ts), signed as WIRE §6.1 says. Retries follow the development
// schedule (seconds), a 410 ends them and mails the owner once, a redirect is a failed
// attempt never followed, a target the SSRF guard refuses is journaled, quiet batches
// send nothing, replays and rotations work as WIRE §2.6 and §6.2 say.
import { createExecutionContext, createMessageBatch, env, getQueueResult, runInDurableObject } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { holdEagerFlush } from "./hold-outbox";
import { call, claimedAgent, expectError, json, signIn } from "../helpers";
import { quietFor, waitFor } from "../../support/wait";
import type { ReceivedRequest } from "../../support/webhook-receiver-types";
import { deliveryForChange } from "../../../src/effects/webhooks/fire";

const receiver = inject("webhookReceiver");
type Obj = Record<string, unknown>;

function inbox(): string {
  return `in-${crypto.randomUUID().slice(0, 8)}`;
}

async function received(name: string, count = 1): Promise<ReceivedRequest[]> {
  return waitFor(async () => {
    const log = (await (await fetch(`${receiver}/log/${name}`)).json()) as ReceivedRequest[];
    return log.length >= count ? log : null;
  }, { timeout: 30_000, interval: 100, message: `${count} request(s) at inbox ${name}` });
}

async function behave(name: string, behaviour: { status: number; times?: number; retryAfter?: string; location?: string }): Promise<void> {
  const res = await fetch(`${receiver}/control/${name}`, { method: "POST", body: JSON.stringify(behaviour) });
  expect(res.status).toBe(204);
}

function manifest(webhooks: Obj[], extra: Obj = {}): Obj {
  return {
    "x-service-manifest": {
      app: { name: "Hooks" },
      collections: { notes: { read: ["owner"], write: ["owner"], delete: ["owner"] }, ...(extra.collections as Obj ?? {}) },
      webhooks,
      ...Object.fromEntries(Object.entries(extra).filter(([key]) => key !== "collections")),
    },
  };
}

async function deployWith(webhooks: Obj[], extra: Obj = {}) {
  const human = await signIn();
  const key = (await claimedAgent(human)).api_key;
  const app = await json<{ app_id: string; slug: string; webhook_secret?: string }>(await call("/v1/apps", { key, json: { html: "<p>x</p>", manifest: manifest(webhooks, extra) } }), 201);
  return { human, key, app, rows: `/v1/apps/${app.app_id}/collections/notes` };
}

async function hmacHex(secret: string, message: string): Promise<string> {
  const keyBytes = new TextEncoder().encode(secret);
  const cryptoKey = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return [...new Uint8Array(await crypto.subtle.sign("HMAC", cryptoKey, new TextEncoder().encode(message)))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Verifies X-Service-Signature against each secret; answers how many of its v1 values matched. */
async function verify(request: ReceivedRequest, secrets: string[]): Promise<number> {
  const parts = request.headers["x-service-signature"].split(",");
  const t = parts.find((part) => part.startsWith("t="))!.slice(2);
  expect(Math.abs(Number(t) - Date.now() / 1000)).toBeLessThan(300);
  const macs = parts.filter((part) => part.startsWith("v1=")).map((part) => part.slice(3));
  const expected = await Promise.all(secrets.map((secret) => hmacHex(secret, `${t}.${request.body}`)));
  return macs.filter((mac) => expected.includes(mac)).length;
}

interface Delivery {
  id: string; status: string; attempts: number; responseStatus: number | null; error: string | null; url: string;
  replayOfId: string | null; payload: Obj; payloadTruncated: boolean; nextAttemptAt: string | null; rowKey: string; op: string;
}

async function deliveries(key: string, appId: string, query = ""): Promise<Delivery[]> {
  return (await json<{ deliveries: Delivery[] }>(await call(`/v1/apps/${appId}/webhooks/deliveries${query}`, { key }), 200)).deliveries;
}

describe("outbound webhooks", { timeout: 60_000 }, () => {
  it("a write is delivered once, signed, with the standard body and headers; the journal and a replay say so", async () => {
    const name = inbox();
    const { key, app, rows } = await deployWith([{ on: "create", collection: "notes", url: `${receiver}/hook/${name}?token=abc` }]);
    expect(app.webhook_secret).toMatch(/^whsec_[A-Za-z0-9_-]{32}$/);
    const detail = await json<{ webhook_secret: string }>(await call(`/v1/apps/${app.app_id}`, { key }), 200);
    expect(detail.webhook_secret).toBe(app.webhook_secret);

    const row = await json<{ row: { key: string; version: number; created_at: string } }>(await call(rows, { key, json: { data: { text: "hello" } } }), 201);
    const [request] = await received(name);
    expect(request.method).toBe("POST");
    expect(request.path).toBe(`/hook/${name}?token=abc`);
    expect(request.headers).toMatchObject({
      "content-type": "application/json", "user-agent": "Service-Webhooks/1", "x-service-event": "create", "x-service-collection": "notes",
    });
    expect(await verify(request, [app.webhook_secret!])).toBe(1);
    const body = JSON.parse(request.body) as Obj;
    expect(Object.keys(body).sort()).toEqual(["app_id", "collection", "delivery_id", "feed_seq", "op", "row", "sent_at"]);
    expect(body).toMatchObject({ app_id: app.app_id, collection: "notes", op: "create", delivery_id: request.headers["x-service-delivery"] });
    expect(typeof body.feed_seq).toBe("number");
    expect(body.row).toMatchObject({ key: row.row.key, data: { text: "hello" }, version: 1, created_at: row.row.created_at, updated_at: row.row.created_at });
    expect((body.row as Obj).author).toMatchObject({ kind: "agent" });

    const [journaled] = await waitFor(async () => {
      const list = await deliveries(key, app.app_id);
      return list[0]?.status === "delivered" ? list : null;
    }, { message: "the delivery journaled as delivered" });
    expect(journaled).toMatchObject({
      id: request.headers["x-service-delivery"], status: "delivered", attempts: 1, responseStatus: 200, error: null,
      url: `${new URL(receiver).host}/hook/${name}`, rowKey: row.row.key, op: "create", replayOfId: null, payloadTruncated: false, nextAttemptAt: null,
    });

    const replay = await json<{ delivery: Delivery }>(await call(`/v1/apps/${app.app_id}/webhooks/deliveries/${journaled.id}/replay`, { key, method: "POST" }), 200);
    expect(replay.delivery).toMatchObject({ replayOfId: journaled.id, status: "pending" });
    expect(replay.delivery.id).not.toBe(journaled.id);
    const [, again] = await received(name, 2);
    expect(again.headers["x-service-delivery"]).toBe(replay.delivery.id);
    expect((JSON.parse(again.body) as Obj).delivery_id).toBe(replay.delivery.id);
    expect(await verify(again, [app.webhook_secret!])).toBe(1);
  });

  it("a receiver that fails twice gets the delivery on the third attempt; every attempt is recorded", async () => {
    const name = inbox();
    await behave(name, { status: 503, times: 2 });
    const { key, app, rows } = await deployWith([{ on: "create", collection: "notes", url: `${receiver}/hook/${name}` }]);
    await json(await call(rows, { key, json: { data: { text: "retry me" } } }), 201);
    const log = await received(name, 3);
    expect(new Set(log.map((r) => r.headers["x-service-delivery"])).size).toBe(1);
    const [delivery] = await waitFor(async () => {
      const list = await deliveries(key, app.app_id);
      return list[0]?.status === "delivered" ? list : null;
    }, { timeout: 30_000, message: "delivered on the third attempt" });
    expect(delivery.attempts).toBe(3);
    const attempts = await env.DB.prepare("SELECT attempt, response_status FROM webhook_attempts WHERE delivery_id = ?1 ORDER BY attempt").bind(delivery.id).all();
    expect(attempts.results).toEqual([{ attempt: 1, response_status: 503 }, { attempt: 2, response_status: 503 }, { attempt: 3, response_status: 200 }]);
  });

  it("410 Gone ends the retries and mails the owner once per rule per window; a redirect is a failed attempt, never followed", async () => {
    const gone = inbox();
    const moved = inbox();
    await behave(gone, { status: 410 });
    await behave(moved, { status: 302, times: 1, location: `${receiver}/hook/${moved}-elsewhere` });
    const { human, key, app, rows } = await deployWith([
      { on: "create", collection: "notes", url: `${receiver}/hook/${gone}` },
      { on: "update", collection: "notes", url: `${receiver}/hook/${moved}` },
    ]);
    const first = await json<{ row: { key: string } }>(await call(rows, { key, json: { data: { text: "one" } } }), 201);
    await json(await call(rows, { key, json: { data: { text: "two" } } }), 201);
    await received(gone, 2);
    const failed = await waitFor(async () => {
      const list = await deliveries(key, app.app_id, "?status=failed");
      return list.length === 2 ? list : null;
    }, { message: "both 410 deliveries failed" });
    expect(failed.map((d) => [d.attempts, d.responseStatus])).toEqual([[1, 410], [1, 410]]);
    const mails = () => env.DB.prepare(`SELECT subject FROM dev_mail WHERE "to" = ?1 AND subject LIKE 'A webhook of %'`).bind(human.email).all().then((r) => r.results);
    await waitFor(async () => (await mails()).length > 0, { message: "the owner mailed" });
    await quietFor(1_000); // a second mail for the same rule would have landed by now
    expect(await mails()).toEqual([{ subject: `A webhook of ${app.slug} failed` }]);

    await json(await call(`${rows}/${first.row.key}`, { key, method: "PATCH", json: { data: { text: "one, edited" } } }), 200);
    const hits = await received(moved, 2);
    expect(hits.map((hit) => hit.path)).toEqual([`/hook/${moved}`, `/hook/${moved}`]);
    expect(await (await fetch(`${receiver}/log/${moved}-elsewhere`)).json()).toEqual([]);
    const update = await waitFor(async () => (await deliveries(key, app.app_id, "?status=delivered"))[0] ?? null, { message: "the update delivered" });
    expect(update.attempts).toBe(2);
  });

  it("a target the SSRF guard refuses is a journaled failure; a missing setting fails closed", async () => {
    const { key, app } = await deployWith(
      [{ on: "create", collection: "notes", urlFromSetting: "hookUrl" }],
      { collections: { settings: { read: ["owner"], write: ["owner"], delete: ["owner"] } }, settingsCollection: "settings" },
    );
    const rows = `/v1/apps/${app.app_id}/collections/notes`;
    await json(await call(rows, { key, json: { data: { text: "no setting yet" } } }), 201);
    const unset = await waitFor(async () => (await deliveries(key, app.app_id))[0] ?? null, { message: "the unset setting journaled" });
    expect(unset).toMatchObject({ status: "failed", attempts: 0, error: "urlFromSetting: the setting hookUrl is not set" });

    await json(await call(`/v1/apps/${app.app_id}/collections/settings`, { key, json: { key: "install-config", data: { hookUrl: "http://169.254.169.254/latest/meta-data" } } }), 201);
    await json(await call(rows, { key, json: { data: { text: "metadata" } } }), 201);
    const refused = await waitFor(async () => {
      const list = await deliveries(key, app.app_id);
      return list.length === 2 && list[0].attempts > 0 && list[0].error !== null ? list[0] : null;
    }, { message: "the refused target journaled" });
    expect(refused.status === "pending" || refused.status === "failed").toBe(true);
    expect(refused.responseStatus).toBeNull();
    expect(refused.error).toMatch(/^the target /);
    expect(refused.url).toBe("169.254.169.254/latest/meta-data");
  });

  it("every target of the SSRF table is refused at send time and journaled, none reached", async () => {
    const { key, app } = await deployWith(
      [{ on: "create", collection: "notes", urlFromSetting: "hookUrl" }],
      { collections: { settings: { read: ["owner"], write: ["owner"], delete: ["owner"] } }, settingsCollection: "settings" },
    );
    const settings = `/v1/apps/${app.app_id}/collections/settings`;
    const targets = [
      "http://10.0.0.1/hook", "https://192.168.1.20/", "https://[::ffff:7f00:1]/", "https://[fd00::1]/", "https://printer.local/x",
      "https://metadata.google.internal/computeMetadata", `http://user:pw@127.0.0.1:9/`, "http://127.1:9/", "https://100.64.0.1/",
    ];
    let version = 0;
    for (const [i, target] of targets.entries()) {
      const setting = { key: "install-config", data: { hookUrl: target } };
      if (i === 0) version = (await json<{ row: { version: number } }>(await call(settings, { key, json: setting }), 201)).row.version;
      else version = (await json<{ version: number }>(await call(`${settings}/install-config`, { key, method: "PATCH", json: { data: setting.data, if_match: version } }), 200)).version;
      await json(await call(`/v1/apps/${app.app_id}/collections/notes`, { key, json: { data: { text: target } } }), 201);
      const [latest] = await waitFor(async () => {
        const list = await deliveries(key, app.app_id);
        // Claimed (attempts counted) comes before the outcome is written: wait for the outcome.
        return list.length === i + 1 && list[0].attempts > 0 && (list[0].error !== null || list[0].responseStatus !== null) ? list : null;
      }, { timeout: 15_000, message: `the attempt at ${target} journaled` });
      expect({ target, status: latest.responseStatus, error: latest.error }).toMatchObject({ target, status: null, error: expect.stringMatching(/^the target /) });
    }
  });

  it("quiet batches send nothing, emitEffects batches and body templates do; the payload is never in a queue message", async () => {
    const name = inbox();
    const { key, app, rows } = await deployWith([{ on: "create", collection: "notes", url: `${receiver}/hook/${name}`, bodyTemplate: '{"said": {{text}}, "missing": {{nope}}}' }]);
    await json(await call(`${rows}/batch`, { key, json: { rows: [{ data: { text: "quiet" } }] } }), 200);
    await json(await call(`${rows}/batch`, { key, json: { rows: [{ data: { text: "loud \"quoted\"" } }], emitEffects: true } }), 200);
    const [request] = await received(name);
    expect(request.body).toBe('{"said": "loud \\"quoted\\"", "missing": null}');
    expect(request.headers["x-service-signature"]).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    const list = await deliveries(key, app.app_id);
    expect(list).toHaveLength(1);
  });

  it("rotation: both secrets sign during the grace window; refused without a secret or with a bad grace", async () => {
    const name = inbox();
    const { key, app, rows } = await deployWith([{ on: "create", collection: "notes", url: `${receiver}/hook/${name}` }]);
    const rotated = await json<{ webhook_secret: string; webhook_secret_previous: string; webhook_secret_previous_expires_at: string; rotated_at: string }>(
      await call(`/v1/apps/${app.app_id}/webhook-secret/rotate`, { key, method: "POST", json: { grace_seconds: 600 } }), 200);
    expect(rotated.webhook_secret_previous).toBe(app.webhook_secret);
    expect(Date.parse(rotated.webhook_secret_previous_expires_at) - Date.parse(rotated.rotated_at)).toBe(600_000);
    await json(await call(rows, { key, json: { data: { text: "signed twice" } } }), 201);
    const [request] = await received(name);
    expect(request.headers["x-service-signature"].split(",").filter((part) => part.startsWith("v1="))).toHaveLength(2);
    expect(await verify(request, [rotated.webhook_secret])).toBe(1);
    expect(await verify(request, [app.webhook_secret!])).toBe(1);
    expect((await json<{ webhook_secret: string }>(await call(`/v1/apps/${app.app_id}`, { key }), 200)).webhook_secret).toBe(rotated.webhook_secret);

    await expectError(await call(`/v1/apps/${app.app_id}/webhook-secret/rotate`, { key, method: "POST", json: { grace_seconds: 86_401 } }), 400, "invalid_request");
    const plain = await deployWith([]);
    expect(plain.app.webhook_secret).toBeUndefined();
    await expectError(await call(`/v1/apps/${plain.app.app_id}/webhook-secret/rotate`, { key: plain.key, method: "POST" }), 409, "conflict");
    await expectError(await call(`/v1/apps/${app.app_id}/webhooks/deliveries?status=lost`, { key }), 400, "invalid_request");
    await expectError(await call(`/v1/apps/${app.app_id}/webhooks/deliveries/whd_nope/replay`, { key, method: "POST" }), 404, "not_found");
    await expectError(await call(`/v1/apps/${app.app_id}/webhooks/deliveries`, { key: plain.key }), 404, "app_not_found");
  });

  it("pointers delivered twice, side by side and again later (as after a consumer that failed), make one delivery and one request", async () => {
    const name = inbox();
    const { key, app, rows } = await deployWith([{ on: "create", collection: "notes", url: `${receiver}/hook/${name}` }]);
    const stub = env.APP_STORE.get(env.APP_STORE.idFromName(app.app_id));
    // Take the flush away from the store, so only the batches below hand the entry over.
    await holdEagerFlush(app.app_id);
    await json(await call(rows, { key, json: { data: { text: "twice" } } }), 201);
    const entries = await runInDurableObject(stub, async (_instance, state) => {
      await state.storage.deleteAlarm();
      return state.storage.sql.exec<{ id: number; rule_id: string }>("SELECT id, rule_id FROM _svc_outbox").toArray();
    });
    expect(entries).toHaveLength(1);
    const pointer = { outbox_id: `${app.app_id}:${entries[0].id}`, app_id: app.app_id, entry_id: Number(entries[0].id), kind: "webhooks", rule_id: entries[0].rule_id };
    const worker = (await import("../../../workers/relay")).default;
    const deliver = async (id: string) => {
      const batch = createMessageBatch("relay-effects", [{ id, timestamp: new Date(), attempts: 1, body: pointer }]);
      const ctx = createExecutionContext();
      await worker.queue(batch, env, ctx);
      return getQueueResult(batch, ctx);
    };
    const [first, second] = await Promise.all([deliver("m1"), deliver("m2")]);
    expect([...first.explicitAcks, ...second.explicitAcks].sort()).toEqual(["m1", "m2"]);
    const third = await deliver("m3");
    expect(third.explicitAcks).toEqual(["m3"]);
    await received(name);
    await waitFor(async () => (await deliveries(key, app.app_id))[0]?.status === "delivered", { message: "delivered" });
    await quietFor(1_000);
    expect(await (await fetch(`${receiver}/log/${name}`)).json()).toHaveLength(1);
    expect(await deliveries(key, app.app_id)).toHaveLength(1);
    expect(await runInDurableObject(stub, (_instance, state) => state.storage.sql.exec("SELECT id FROM _svc_outbox").toArray())).toEqual([]);
  });

  it("one outbox entry makes one delivery however often its pointer arrives; webhooks off makes none", async () => {
    const name = inbox();
    const { app } = await deployWith([{ on: "create", collection: "notes", url: `${receiver}/hook/${name}` }]);
    const manifestRule = (await env.DB.prepare("SELECT manifest_json FROM app_versions WHERE app_id = ?1").bind(app.app_id).first<{ manifest_json: string }>())!;
    expect(manifestRule.manifest_json).toContain(name);
    const { parseManifest, manifestLimitsFrom } = await import("../../../src/manifest");
    const { config } = await import("../../../src/config");
    const ruleId = parseManifest(JSON.parse(manifestRule.manifest_json), manifestLimitsFrom(config(env))).webhooks[0].id;
    const change = { seq: 1, op: "create" as const, collection: "notes", key: "k1", version: 1, data: { text: "x" }, author: { kind: "agent" as const, id: "a" }, created_at: new Date().toISOString(), ts: new Date().toISOString(), suppressed: false };
    const first = await deliveryForChange(env, app.app_id, `${app.app_id}:999`, ruleId, change);
    const second = await deliveryForChange(env, app.app_id, `${app.app_id}:999`, ruleId, change);
    expect(second!.id).toBe(first!.id);
    expect(await deliveryForChange({ ...env, WEBHOOKS_ENABLED: "false" } as Env, app.app_id, `${app.app_id}:1000`, ruleId, change)).toBeNull();
    expect(await deliveryForChange(env, app.app_id, `${app.app_id}:1001`, ruleId, { ...change, suppressed: true })).toBeNull();
    expect(await deliveryForChange(env, app.app_id, `${app.app_id}:1002`, "no-such-rule", change)).toBeNull();
  });
});
