// The agent task queue over the real path (WIRE §2.8, §5.5 agentTasks): a write makes a
// queued task; a claim leases it with the envelope of WIRE §2.8 and a credential scoped
// to the rule's reads and writes; ack, nack and extend-lease; concurrent claimers never
// hold the same task; a worker that dies loses nothing (the lease lapses, the task comes
// back with its attempt counted); dead-lettering, ttl, the hourly cap, a prompt edit that
// discards queued tasks, and every bad input answered with a catalogue error.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, callWith, expectError, json } from "../helpers";
import { clockPast, waitFor } from "../../support/wait";
import { recordTask } from "../../../src/effects/tasks/record";
import {
  ack, claim, expectEnvelope, nack, ownerTasks, summariseRule, taskApp, taskManifest, tasksIn, withLease, write,
} from "./helpers";

describe("agent tasks: claim, ack, nack", { timeout: 60_000 }, () => {
  it("a create becomes a queued task; a claim leases it with the WIRE envelope and a scoped credential", async () => {
    const t = await taskApp();
    await write(t, "notes", { text: "background" }, "n1");
    await write(t, "issues", { title: "Login broken" }, "i1");
    await tasksIn(t, "queued");
    const [task, ...rest] = await claim(t.key, { max: 5 });
    expect(rest).toEqual([]);
    expectEnvelope(task);
    expect(task).toMatchObject({
      app_id: t.appId, app_slug: t.slug, task_type: "summarise", prompt: "Summarise the issue in one line.",
      context: { row: { key: "i1", data: { title: "Login broken" } } }, collection: "issues", row_key: "i1",
      reads: ["notes", "summaries"], writes: ["summaries"], api_base: "http://localhost:8787",
    });
    expect((await ownerTasks(t))[0]).toMatchObject({ task_id: task.task_id, status: "leased", attempts: 1 });

    // Reads: its reads and writes; writes: its writes only, stamped as a machine write; never delete.
    await json(await withLease(task.credential, t.appId, "notes/n1"), 200);
    await json(await withLease(task.credential, t.appId, "summaries"), 200);
    const written = await json<{ row: { author: { kind: string; id: string } } }>(
      await withLease(task.credential, t.appId, "summaries", { json: { key: "i1", data: { text: "Users cannot log in." } } }), 201);
    expect(written.row.author).toEqual({ kind: "service", id: task.task_id });
    await json(await withLease(task.credential, t.appId, "summaries/i1", { method: "PATCH", json: { data: { text: "Login fails." } } }), 200);
    await expectError(await withLease(task.credential, t.appId, "summaries/i1", { method: "DELETE" }), 403, "credential_scope_forbidden");
    await json(await call(`/v1/apps/${t.appId}/collections/summaries/i1`, { key: t.key }), 200);
    await expectError(await withLease(task.credential, t.appId, "notes", { json: { data: { text: "x" } } }), 403, "credential_scope_forbidden");
    await expectError(await withLease(task.credential, t.appId, "secrets"), 403, "credential_scope_forbidden");
    await expectError(await withLease(task.credential, t.appId, "issues/i1", { method: "PATCH", json: { data: {} } }), 403, "credential_scope_forbidden");
    // Another app of the same owner does not exist for the credential.
    const other = await taskApp(taskManifest(), t.human);
    await expectError(await withLease(task.credential, other.appId, "summaries"), 404, "app_not_found");
    // Nor do the owner's other routes.
    await expectError(await call(`/v1/apps/${t.appId}`, { key: task.credential }), 401, "unauthorized");

    await json(await ack(t.key, task.task_id, { report: "summarised" }), 200);
    expect((await ownerTasks(t))[0]).toMatchObject({ status: "done", report: "summarised", lease_expires_at: null });
    await expectError(await withLease(task.credential, t.appId, "summaries"), 401, "unauthorized");
    await expectError(await ack(t.key, task.task_id), 409, "task_not_leased");
    expect(await claim(t.key)).toEqual([]);
  });

  it("two concurrent claimers never hold the same task", async () => {
    const t = await taskApp();
    for (let i = 0; i < 6; i++) await write(t, "issues", { title: `issue ${i}` }, `c${i}`);
    await tasksIn(t, "queued", 6);
    const second = await taskApp(taskManifest(), t.human);
    const claims = await Promise.all([claim(t.key, { max: 4 }), claim(second.key, { max: 4 }), claim(t.key, { max: 4 }), claim(second.key, { max: 4 })]);
    const ids = claims.flat().map((task) => task.task_id);
    expect(ids.length).toBe(6);
    expect(new Set(ids).size).toBe(6);
    const credentials = new Set(claims.flat().map((task) => task.credential));
    expect(credentials.size).toBe(6);
  });

  it("app_ids narrows a claim to those apps; another owner's tasks are never claimed", async () => {
    const t = await taskApp();
    const second = await taskApp(taskManifest(), t.human);
    const stranger = await taskApp();
    await write(t, "issues", { title: "a" }, "a");
    await write(second, "issues", { title: "b" }, "b");
    await write(stranger, "issues", { title: "s" }, "s");
    await tasksIn(t, "queued");
    await tasksIn(second, "queued");
    await tasksIn(stranger, "queued");
    const only = await claim(t.key, { max: 10, app_ids: [second.appId, stranger.appId] });
    expect(only.map((task) => task.app_id)).toEqual([second.appId]);
    const rest = await claim(t.key, { max: 10 });
    expect(rest.map((task) => task.app_id)).toEqual([t.appId]);
    await expectError(await ack(t.key, (await claim(stranger.key))[0].task_id), 404, "task_not_found");
  });

  it("a nack returns the task after a backoff with its attempt used; the last attempt dead-letters it", async () => {
    const t = await taskApp();
    await write(t, "issues", { title: "flaky" }, "f");
    await tasksIn(t, "queued");
    const limits = { AGENT_TASKS_MAX_ATTEMPTS: "2" };
    const [first] = await claim(t.key, { max: 1 }, limits);
    const answer = await json<{ status: string; attempts: number; available_at: string }>(await nack(t.key, first.task_id, { report: "tool crashed" }, limits), 200);
    expect(answer).toMatchObject({ task_id: first.task_id, status: "queued", attempts: 1 });
    expect(Date.parse(answer.available_at)).toBeGreaterThan(Date.now() - 100);
    await expectError(await withLease(first.credential, t.appId, "summaries"), 401, "unauthorized");
    expect((await ownerTasks(t))[0]).toMatchObject({ status: "queued", attempts: 1, report: "tool crashed" });
    // Not before the backoff (development: 1 s, doubling).
    expect(await claim(t.key, { max: 1 }, limits)).toEqual([]);
    const second = await waitFor(async () => (await claim(t.key, { max: 1 }, limits))[0], { timeout: 10_000, interval: 200, message: "the nacked task back" });
    expect(second.task_id).toBe(first.task_id);
    expect(second.credential).not.toBe(first.credential);
    expect(await json(await nack(t.key, second.task_id, { report: "again" }, limits), 200)).toMatchObject({ status: "dead", attempts: 2, available_at: null });
    expect((await ownerTasks(t, "?status=dead"))[0]).toMatchObject({ task_id: first.task_id, attempts: 2, report: "again" });
  });

  it("a worker that dies mid-task loses nothing: the lease lapses, the credential stops, the task comes back with its attempt counted", async () => {
    const t = await taskApp(taskManifest([summariseRule({ leaseSeconds: 1 })]));
    await write(t, "issues", { title: "long" }, "l");
    await tasksIn(t, "queued");
    const [first] = await claim(t.key, { max: 1 });
    expect(Date.parse(first.lease_expires_at) - Date.now()).toBeLessThanOrEqual(1000);
    await clockPast(Date.parse(first.lease_expires_at));
    await expectError(await withLease(first.credential, t.appId, "summaries"), 401, "unauthorized");
    await expectError(await ack(t.key, first.task_id), 409, "task_not_leased");
    const [again] = await claim(t.key, { max: 1 });
    expect(again.task_id).toBe(first.task_id);
    expect((await ownerTasks(t))[0]).toMatchObject({ status: "leased", attempts: 2 });
    // Extending keeps it held past its first lease length.
    const extended = await json<{ lease_expires_at: string }>(await call(`/v1/agent-tasks/${again.task_id}/extend-lease`, { key: t.key, json: { seconds: 60 } }), 200);
    expect(Date.parse(extended.lease_expires_at) - Date.now()).toBeGreaterThan(50_000);
    await clockPast(Date.parse(again.lease_expires_at));
    await json(await withLease(again.credential, t.appId, "summaries"), 200);
    await json(await ack(t.key, again.task_id, {}), 200);
    expect((await ownerTasks(t))[0]).toMatchObject({ status: "done", attempts: 2 });
  });

  it("the sweep returns lapsed leases to the queue and dead-letters those out of attempts", async () => {
    const t = await taskApp(taskManifest([summariseRule({ leaseSeconds: 1 })]));
    await write(t, "issues", { title: "s1" }, "s1");
    await tasksIn(t, "queued");
    const [task] = await claim(t.key, { max: 1 });
    await clockPast(Date.parse(task.lease_expires_at));
    await json(await call("/__dev/cron", { method: "POST", json: {} }), 200);
    expect((await ownerTasks(t))[0]).toMatchObject({ status: "queued", attempts: 1, lease_expires_at: null });
    const [back] = await claim(t.key, { max: 1 }, { AGENT_TASKS_MAX_ATTEMPTS: "2" });
    await clockPast(Date.parse(back.lease_expires_at));
    expect(await claim(t.key, { max: 1 }, { AGENT_TASKS_MAX_ATTEMPTS: "2" })).toEqual([]);
    expect((await ownerTasks(t))[0]).toMatchObject({ status: "dead", attempts: 2 });
  });

  it("ttlSeconds: a task nobody claims in time expires", async () => {
    const t = await taskApp(taskManifest([summariseRule({ ttlSeconds: 1 })]));
    await write(t, "issues", { title: "stale" }, "st");
    const [queued] = await tasksIn(t, "queued");
    await clockPast(Date.parse(queued.available_at) + 1000);
    expect(await claim(t.key)).toEqual([]);
    expect((await ownerTasks(t))[0]).toMatchObject({ status: "expired" });
  });

  it("editing a rule's prompt discards the queued tasks of the old rule; the new rule fires on", async () => {
    const t = await taskApp();
    await write(t, "issues", { title: "old" }, "o");
    await tasksIn(t, "queued");
    const edited = taskManifest([summariseRule({ prompt: "Summarise it in French." })]);
    await json(await call(`/v1/apps/${t.appId}/versions`, { key: t.key, json: { manifest: edited } }), 200);
    expect((await ownerTasks(t))[0]).toMatchObject({ status: "discarded" });
    await write(t, "issues", { title: "new" }, "n");
    await tasksIn(t, "queued");
    const [task] = await claim(t.key);
    expect(task).toMatchObject({ row_key: "n", prompt: "Summarise it in French." });
  });

  it("a quiet batch makes no task; the hourly cap holds tasks back as capped", async () => {
    const t = await taskApp();
    await json(await call(`/v1/apps/${t.appId}/collections/issues/batch`, { key: t.key, json: { rows: [{ key: "q", data: {} }], suppress: ["agentTasks"] } }), 200);
    await write(t, "issues", { title: "loud" }, "loud");
    await tasksIn(t, "queued");
    expect((await ownerTasks(t)).map((task) => task.row_key)).toEqual(["loud"]);

    const capped = { ...env, AGENT_TASKS_APP_HOURLY_CAP: "1" } as Env;
    const change = { seq: 1, op: "create" as const, collection: "issues", version: 1, data: {}, author: { kind: "agent" as const, id: "a" }, created_at: new Date().toISOString(), ts: new Date().toISOString(), suppressed: false };
    const ruleId = await ruleIdOf(t.appId);
    expect(await recordTask(capped, t.appId, "cap-test-1", ruleId, { ...change, key: "k1" })).toEqual({ queued: false });
    expect((await ownerTasks(t, "?status=capped")).map((task) => task.row_key)).toEqual(["k1"]);
    // The same outbox entry twice makes one task; while it waits, the second delivery wakes the workers again.
    const roomy = { ...env } as Env;
    const made = await recordTask(roomy, t.appId, "cap-test-2", ruleId, { ...change, key: "k2" });
    expect(made.queued).toBe(true);
    expect(await recordTask(roomy, t.appId, "cap-test-2", ruleId, { ...change, key: "k2" })).toEqual(made);
    expect((await ownerTasks(t)).filter((task) => task.row_key === "k2").length).toBe(1);
    expect(await recordTask(roomy, t.appId, "cap-test-1", ruleId, { ...change, key: "k1" })).toEqual({ queued: false });
  });

  it("bad input is a catalogue error and changes nothing", async () => {
    const t = await taskApp();
    await write(t, "issues", { title: "x" }, "x");
    await tasksIn(t, "queued");
    for (const body of [{}, { max: 0 }, { max: 101 }, { max: 1.5 }, { max: "1" }, { max: 1, app_ids: [] }, { max: 1, extra: true }, { max: 1, app_ids: "a" }]) {
      await expectError(await call("/v1/agent-tasks/claim", { key: t.key, json: body }), 400, "invalid_request");
    }
    await expectError(await call("/v1/agent-tasks/claim", { json: { max: 1 } }), 401, "unauthorized");
    await expectError(await call("/v1/agent-tasks/claim", { key: t.key, body: "{", contentType: "application/json" }), 400, "invalid_request");
    expect((await ownerTasks(t))[0]).toMatchObject({ status: "queued", attempts: 0 });
    const [task] = await claim(t.key, { max: 1 });
    await expectError(await ack(t.key, "task_nope"), 404, "task_not_found");
    await expectError(await ack(t.key, task.task_id, { report: 5 }), 400, "invalid_request");
    await expectError(await ack(t.key, task.task_id, { report: "x".repeat(10_001) }), 400, "invalid_request");
    await expectError(await nack(t.key, task.task_id, { reason: "x" }), 400, "invalid_request");
    await expectError(await call(`/v1/agent-tasks/${task.task_id}/extend-lease`, { key: t.key, json: { seconds: 0 } }), 400, "invalid_request");
    await expectError(await callWith({ AGENT_TASKS_MAX_LEASE_SECONDS: "10" }, `/v1/agent-tasks/${task.task_id}/extend-lease`, { key: t.key, json: { seconds: 11 } }), 400, "invalid_request");
    const stranger = await taskApp();
    await expectError(await ack(stranger.key, task.task_id), 404, "task_not_found");
    await expectError(await withLease(`svcc_${"0".repeat(32)}`, t.appId, "summaries"), 401, "unauthorized");
    await expectError(await withLease("svcc_short", t.appId, "summaries"), 401, "unauthorized");
    expect((await ownerTasks(t))[0]).toMatchObject({ status: "leased", attempts: 1 });
    await expectError(await call(`/v1/apps/${t.appId}/agent-tasks?status=bogus`, { key: t.key }), 400, "invalid_request");
  });

  it("deploy refuses a rule that admits machine authors and writes where a task rule fires", async () => {
    const t = await taskApp();
    const looping = taskManifest([summariseRule(), { on: "create", collection: "summaries", taskType: "t", prompt: "p", machineAuthorKinds: ["service"], writes: ["issues"] }]);
    const refusal = await expectError(await call(`/v1/apps/${t.appId}/versions`, { key: t.key, json: { manifest: looping } }), 400, "agent_task_invalid");
    expect(JSON.stringify(refusal.details)).toContain("writes");
  });
});

async function ruleIdOf(appId: string): Promise<string> {
  const row = await env.DB.prepare("SELECT rule_id FROM agent_tasks WHERE app_id = ?1 LIMIT 1").bind(appId).first<{ rule_id: string }>();
  return row!.rule_id;
}
