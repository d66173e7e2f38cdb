// A deploy's follow-up state (issue 16, Faults): the inbound hooks a manifest declares,
// the webhook signing secret and the discarded tasks of dropped rules are derived from the
// version that goes live. A failure between the version switch and those steps (the
// database refusing from the Nth statement on, as a process killed there would leave it)
// must never leave a live version without them: after every
// refused attempt the app is exactly as before (v1 live with v1's hooks, no secret) or
// whole (v2 live with all of v2's hooks and its secret), and the next attempt goes through.
// The same holds for the first deploy: no app is ever left without its hooks or secret.
import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { call, claimedAgent, json, signIn } from "../helpers";
import { probe, type ProbeResult } from "../faults/probe";
import { deployIngest, ingestManifest, post, type Obj } from "../ingest/fixtures";

const receiver = inject("webhookReceiver");

const v1Hooks = [{ name: "keep", collection: "issues", map: { title: "title" } }, { name: "drop", collection: "issues" }];
const v2Hooks = [{ name: "keep", collection: "issues", map: { title: "name" } }, { name: "fresh", collection: "issues", map: { title: "title" } }];
const v2Webhooks = { webhooks: [{ on: "create", collection: "issues", url: `${receiver}/hook/never` }] };

/** What a deploy derives, read with the real database: each hook's map (null when disabled), the secret, the version. */
async function derived(appId: string) {
  const app = await env.DB.prepare("SELECT current_version AS version, (SELECT count(*) FROM app_versions WHERE app_id = ?1) AS versions FROM apps WHERE id = ?1")
    .bind(appId).first<{ version: number; versions: number }>();
  const hooks = (await env.DB.prepare("SELECT name, rule_json FROM ingest_hooks WHERE app_id = ?1 ORDER BY name").bind(appId).all<{ name: string; rule_json: string | null }>()).results
    .map((hook) => [hook.name, hook.rule_json === null ? null : (JSON.parse(hook.rule_json) as { map?: Obj }).map ?? "whole body"]);
  const secrets = (await env.DB.prepare("SELECT count(*) AS n FROM webhook_secrets WHERE app_id = ?1").bind(appId).first<{ n: number }>())!.n;
  return { version: app?.version ?? null, versions: app?.versions ?? 0, hooks, secrets };
}

/** Redeploys v1 → v2 through `probe` (an outage from each statement in turn) and checks v2 then works end to end. */
async function redeployThroughOutage(): Promise<ProbeResult> {
  const t = await deployIngest(v1Hooks);
  const v1 = await derived(t.appId);
  expect(v1).toEqual({ version: 1, versions: 1, hooks: [["drop", "whole body"], ["keep", { title: "title" }]], secrets: 0 });
  const keepUrl = (await t.hook("keep")).url;
  const v2 = { version: 2, versions: 2, hooks: [["drop", null], ["fresh", { title: "title" }], ["keep", { title: "name" }]], secrets: 1 };
  const result = await probe({
    path: `/v1/apps/${t.appId}/versions`,
    options: () => ({ key: t.key, json: { manifest: ingestManifest(v2Hooks, v2Webhooks), force: true } }),
    state: () => derived(t.appId),
    whole: async () => JSON.stringify(await derived(t.appId)) === JSON.stringify(v2),
  });
  expect(result.refused).toBeGreaterThan(0);
  // v2's new hook receives; the kept one keeps its URL and maps by v2's rule; the dropped one is gone.
  await json(await post((await t.hook("fresh")).url, { title: "via fresh" }), 200);
  expect((await t.hook("keep")).url).toBe(keepUrl);
  await json(await post(keepUrl, { name: "via keep" }), 200);
  expect((await t.rows()).map((row) => row.data.title).sort()).toEqual(["via fresh", "via keep"]);
  expect((await call(new URL((await t.hook("drop")).url).pathname, { method: "POST", body: "{}", contentType: "application/json" })).status).toBe(404);
  // The secret is the owner's to read, and a further redeploy still goes through.
  const detail = await json<{ webhook_secret?: string }>(await call(`/v1/apps/${t.appId}`, { key: t.key }), 200);
  expect(detail.webhook_secret).toMatch(/^whsec_/);
  await json(await call(`/v1/apps/${t.appId}/versions`, { key: t.key, json: { html: "<p>v3</p>" } }), 200);
  expect((await derived(t.appId)).version).toBe(3);
  return result;
}

describe("redeploy follow-ups: no live version without its derived state", { timeout: 60_000 }, () => {
  it("a redeploy through a D1 outage from any statement on: v1 with its hooks, or v2 with all of its hooks and its secret", async () => {
    const result = await redeployThroughOutage();
    expect(result.wholeAfterRefusal).toBe(0);
  });

  it("creating an app through a D1 outage from any statement on: no app without its hooks or secret", async () => {
    const human = await signIn();
    const key = (await claimedAgent(human)).api_key;
    const ofOwner = "app_id IN (SELECT id FROM apps WHERE owner_human_id = ?1)";
    const scalar = async (sql: string) => (await env.DB.prepare(sql).bind(human.humanId).first<{ n: number }>())!.n;
    const state = async () => ({
      apps: await scalar("SELECT count(*) AS n FROM apps WHERE owner_human_id = ?1"),
      versions: await scalar(`SELECT count(*) AS n FROM app_versions WHERE ${ofOwner}`),
      hooks: await scalar(`SELECT count(*) AS n FROM ingest_hooks WHERE ${ofOwner}`),
      secrets: await scalar(`SELECT count(*) AS n FROM webhook_secrets WHERE ${ofOwner}`),
    });
    const result = await probe({
      path: "/v1/apps",
      options: () => ({ key, json: { html: "<p>x</p>", manifest: ingestManifest(v2Hooks, v2Webhooks) } }),
      state,
      whole: async (before) => JSON.stringify(await state()) === JSON.stringify({ apps: before.apps + 1, versions: before.versions + 1, hooks: before.hooks + 2, secrets: before.secrets + 1 }),
    });
    expect(result.refused).toBeGreaterThan(0);
    expect(result.wholeAfterRefusal).toBe(0);
  });

  it("a purge takes the app's derived state with it: no hook or webhook secret outlives it (a create undone after its starter rows are refused is purged too)", async () => {
    const human = await signIn();
    const key = (await claimedAgent(human)).api_key;
    const created = await json<{ app_id: string; webhook_secret?: string }>(await call("/v1/apps", { key, json: { html: "<p>x</p>", manifest: ingestManifest(v2Hooks, v2Webhooks) } }), 201);
    expect(created.webhook_secret).toMatch(/^whsec_/);
    expect(await derived(created.app_id)).toMatchObject({ version: 1, secrets: 1 });
    await json(await call(`/v1/apps/${created.app_id}`, { key, method: "DELETE" }), 200);
    await json(await call(`/v1/apps/${created.app_id}/purge`, { key, method: "POST", json: {} }), 200);
    expect(await derived(created.app_id)).toEqual({ version: null, versions: 0, hooks: [], secrets: 0 });
  });
});
