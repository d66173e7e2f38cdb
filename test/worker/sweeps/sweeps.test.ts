// The cron sweep: expired codes and links go, and apps past their trash window are
// purged for good (registry records and the AppStore's rows).
import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../../workers/relay";
import { call, claimedAgent, count, expectError, json, signIn } from "../helpers";
import { TRASH_DAYS } from "../../../src/apps/trash";

const manifest = {
  "x-service-manifest": { app: { name: "Trash" }, collections: { notes: { read: ["owner"], write: ["owner"], delete: ["owner"] } } },
};

async function runSweep(): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ cron: "17 3 * * *", scheduledTime: Date.now() }), env, ctx);
  await waitOnExecutionContext(ctx);
}

describe("cron sweep", () => {
  it("purges apps whose trash window has passed and keeps younger ones", async () => {
    const human = await signIn();
    const { api_key: key } = await claimedAgent(human);
    const old = await json<{ app_id: string }>(await call("/v1/apps", { key, json: { html: "<p>old</p>", manifest } }), 201);
    const young = await json<{ app_id: string }>(await call("/v1/apps", { key, json: { html: "<p>young</p>", manifest } }), 201);
    await json(await call(`/v1/apps/${old.app_id}/collections/notes`, { key, json: { data: { n: 1 } } }), 201);
    for (const id of [old.app_id, young.app_id]) await json(await call(`/v1/apps/${id}`, { method: "DELETE", key }), 200);
    const aged = new Date(Date.now() - (TRASH_DAYS + 1) * 86_400_000).toISOString();
    await env.DB.prepare("UPDATE apps SET deleted_at = ?1 WHERE id = ?2").bind(aged, old.app_id).run();

    await runSweep();

    expect(await count("apps", "id = ?1", old.app_id)).toBe(0);
    expect(await count("app_versions", "app_id = ?1", old.app_id)).toBe(0);
    await expectError(await call(`/v1/apps/${old.app_id}?include_deleted=true`, { key }), 404, "app_not_found");
    const stub = env.APP_STORE.get(env.APP_STORE.idFromName(old.app_id));
    expect((await stub.usage()).rowCount).toBe(0);
    const kept = await json<{ status: string; purge_after: string }>(await call(`/v1/apps?status=deleted`, { key }), 200);
    expect(JSON.stringify(kept)).toContain(young.app_id);
  });

  it("drops expired claim codes", async () => {
    const human = await signIn();
    await json(await call("/v1/self/claim-codes", { method: "POST", session: human.session }), 201);
    await env.DB.prepare("UPDATE claim_codes SET expires_at = ?1 WHERE human_id = ?2").bind("2000-01-01T00:00:00.000Z", human.humanId).run();
    await runSweep();
    expect(await count("claim_codes", "human_id = ?1", human.humanId)).toBe(0);
  });
});

describe("cron sweep of expired access tokens", () => {
  it("drops invitations, transfer offers and preview tokens a day past expiry, and keeps live ones", async () => {
    const human = await signIn();
    const { api_key: key } = await claimedAgent(human);
    const mk = async () => (await json<{ app_id: string }>(await call("/v1/apps", { key, json: { html: "<p>t</p>", manifest } }), 201)).app_id;
    const [aged, live] = [await mk(), await mk()];
    for (const appId of [aged, live]) {
      await call(`/v1/apps/${appId}/members`, { method: "POST", key, json: { email: `invitee-${appId}@example.com` } });
      await call(`/v1/apps/${appId}/preview-tokens`, { method: "POST", key, json: {} });
      await call(`/v1/apps/${appId}/transfer`, { method: "POST", key, json: { email: `new-owner-${appId}@example.com` } });
    }
    const tables = ["app_invites", "preview_tokens", "app_transfers"];
    for (const table of tables) {
      expect(await count(table, "app_id = ?1", aged), table).toBe(1);
      await env.DB.prepare(`UPDATE ${table} SET expires_at = ?1 WHERE app_id = ?2`).bind("2000-01-01T00:00:00.000Z", aged).run();
    }
    await runSweep();
    for (const table of tables) {
      expect(await count(table, "app_id = ?1", aged), table).toBe(0);
      expect(await count(table, "app_id = ?1", live), table).toBe(1);
    }
  });
});
