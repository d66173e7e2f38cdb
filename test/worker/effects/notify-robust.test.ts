// Notify when things change under a held digest, through the real write → alarm → queue →
// consumer path: a member removed between the write and their digest gets nothing and is
// recorded as suppressed (the owner's mail still goes); a push service answering 503 is
// tried again after a growing delay and the push lands once it answers 201; one that
// keeps answering 503 is tried NOTIFY_SEND_MAX_ATTEMPTS times and then recorded as failed.
// A mail API that fails (production's MAIL_HTTP_URL answering 503) is tried again after
// the window and the mail goes once it answers. The writes themselves succeed throughout.
import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { call, json } from "../helpers";
import { waitFor } from "../../support/wait";
import type { ReceivedRequest } from "../../support/webhook-receiver-types";
import { addMember, create, deployNotify, notifyManifest, personKey, recordedFor, type NotifyApp } from "./notify-fixtures";
import { browser, saved } from "./push-service";
import { NOTIFY_SEND_MAX_ATTEMPTS, retryDelayMs, runDigest } from "../../../src/effects/notify/digests";
import { recordNotifications } from "../../../src/effects/notify/fire";
import { config } from "../../../src/config";
import { manifestLimitsFrom, parseManifest } from "../../../src/manifest";

const receiver = inject("webhookReceiver");
const NOTES = { read: ["member"], write: ["member"], delete: ["owner"] };
const WAIT = { timeout: 45_000, interval: 100 };

async function log(name: string): Promise<ReceivedRequest[]> {
  return (await (await fetch(`${receiver}/log/${name}`)).json()) as ReceivedRequest[];
}

async function pushTo(t: NotifyApp, status: number): Promise<string> {
  const name = `retry-${crypto.randomUUID().slice(0, 8)}`;
  await saved(t.who.human, await browser(`${receiver}/hook/${name}`));
  expect((await fetch(`${receiver}/control/${name}`, { method: "POST", body: JSON.stringify({ status }) })).status).toBe(204);
  return name;
}

function pushApp(): Promise<NotifyApp> {
  return deployNotify(notifyManifest({ notes: NOTES }, [
    { on: "create", collection: "notes", to: ["owner"], channels: ["push"], subject: "New {{title}}", body: "b", link: "/notes" },
  ], { offline: true }), "public");
}

async function attemptsOf(appId: string, rowKey: string): Promise<number | null> {
  return env.DB.prepare("SELECT attempts FROM notifications WHERE app_id = ?1 AND row_key = ?2").bind(appId, rowKey).first<number>("attempts");
}

describe("notify: rechecks and retries", { timeout: 60_000 }, () => {
  it("a member removed before their digest goes gets nothing, recorded as suppressed", async () => {
    const t = await deployNotify(notifyManifest({ notes: NOTES }, [
      { on: "create", collection: "notes", to: ["members"], subject: "Team {{title}}", body: "b" },
    ]));
    const member = await addMember(t);
    const key = await create(t, "notes", { title: "Plan" });
    // Recorded and held for the member's digest window (3 s in development), then removed.
    await waitFor(async () => (await recordedFor(t.app.app_id, key)).find((row) => row.recipient === personKey(member))?.status === "held",
      { ...WAIT, interval: 20, message: "the member's notification held" });
    expect((await call(`/v1/apps/${t.app.app_id}/members/${member.humanId}`, { key: t.key, method: "DELETE" })).status).toBeLessThan(300);
    const records = await waitFor(async () => {
      const now = await recordedFor(t.app.app_id, key);
      return now.length === 2 && now.every((row) => row.status !== "held" && row.status !== "sending") ? now : null;
    }, { ...WAIT, message: "both recipients' digests settled" });
    expect(records).toEqual(expect.arrayContaining([
      { recipient: personKey(t.who.human), channel: "email", status: "sent", reason: null },
      { recipient: personKey(member), channel: "email", status: "suppressed", reason: "no longer the owner or a member of the app" },
    ]));
  });

  it("a push service answering 503 is tried again, and the push is recorded sent once it answers", async () => {
    const t = await pushApp();
    const name = await pushTo(t, 503);
    const key = await create(t, "notes", { title: "first" });
    await waitFor(async () => (await log(name)).length >= 1, { ...WAIT, message: "the first push attempt" });
    expect((await fetch(`${receiver}/control/${name}`, { method: "POST", body: JSON.stringify({ status: 201 }) })).status).toBe(204);
    await waitFor(async () => (await recordedFor(t.app.app_id, key))[0]?.status === "sent", { ...WAIT, message: "the push sent on a retry" });
    expect((await log(name)).length).toBe(2);
    expect(await attemptsOf(t.app.app_id, key)).toBe(1);
  });

  it("a push service that keeps answering 503 is tried a bounded number of times, then recorded failed", async () => {
    const t = await pushApp();
    const name = await pushTo(t, 503);
    const key = await create(t, "notes", { title: "doomed" });
    const [record] = await waitFor(async () => {
      const now = await recordedFor(t.app.app_id, key);
      return now[0]?.status === "failed" ? now : null;
    }, { ...WAIT, message: "the push recorded failed after its attempts" });
    expect(record).toEqual({ recipient: personKey(t.who.human), channel: "push", status: "failed", reason: "the push service answered 503" });
    const attempts = await log(name);
    expect(attempts).toHaveLength(NOTIFY_SEND_MAX_ATTEMPTS);
    // Each retry waits longer than the one before (the digest window, doubling).
    const gaps = attempts.slice(1).map((request, i) => request.at - attempts[i].at);
    for (let i = 1; i < gaps.length; i += 1) expect(gaps[i]).toBeGreaterThan(gaps[i - 1]);
  });

  it("a mail API that fails is tried again after the window, and the mail goes once it answers", async () => {
    const t = await deployNotify(notifyManifest({ notes: NOTES }, [
      { on: "create", collection: "notes", to: ["owner"], subject: "Mail {{title}}", body: "b" },
    ]));
    const name = `mailapi-${crypto.randomUUID().slice(0, 8)}`;
    const production = { ...env, RELAY_ENV: "production", MAIL_HTTP_URL: `${receiver}/hook/${name}`, MAIL_HTTP_TOKEN: "mail-token" } as unknown as Env;
    expect((await fetch(`${receiver}/control/${name}`, { method: "POST", body: JSON.stringify({ status: 503 }) })).status).toBe(204);
    // The row exists (a quiet batch fires nothing); its notification is recorded as the consumer would.
    const key = `mail-${crypto.randomUUID().slice(0, 8)}`;
    await json(await call(`${t.rows("notes")}/batch`, { key: t.key, json: { rows: [{ key, data: { title: "rent" } }] } }), 200);
    const versionRow = await env.DB.prepare("SELECT manifest_json FROM app_versions WHERE app_id = ?1").bind(t.app.app_id).first<{ manifest_json: string }>();
    const ruleId = parseManifest(JSON.parse(versionRow!.manifest_json), manifestLimitsFrom(config(env))).notify[0].id;
    const at = new Date().toISOString();
    const change = { seq: 1, op: "create" as const, collection: "notes", key, version: 1, data: { title: "rent" }, author: { kind: "agent" as const, id: t.who.agent.agent_id }, created_at: at, ts: at, suppressed: false };
    expect(await recordNotifications(env, t.app.app_id, `${t.app.app_id}:mail-${key}`, ruleId, change)).toBe(1);
    const digest = { appId: t.app.app_id, channel: "email" as const, recipient: personKey(t.who.human) };

    const first = Date.now() + 60_000;
    await runDigest(production, digest, { now: first });
    expect((await recordedFor(t.app.app_id, key))[0]).toMatchObject({ status: "held", reason: "send 1 failed, trying again: the mail API answered 503" });
    expect((await fetch(`${receiver}/control/${name}`, { method: "POST", body: JSON.stringify({ status: 200 }) })).status).toBe(204);
    // Not due yet: nothing is sent before the retry's delay.
    await runDigest(production, digest, { now: first + 1_000 });
    expect(await log(name)).toHaveLength(1);
    await runDigest(production, digest, { now: first + retryDelayMs(production, 1) });
    expect((await recordedFor(t.app.app_id, key))[0]).toMatchObject({ status: "sent", reason: null });
    expect(await log(name)).toHaveLength(2);
    expect(await attemptsOf(t.app.app_id, key)).toBe(1);
  });
});
