// Template upgrades of an installed app (WIRE §2.2, §2.14 TemplateUpgradePreview; spec B
// "Template upgrades"): the preview, applying the newest listed version through the
// redeploy gate, the expect_version pin, permission widening needing accept_permissions,
// a version that would strand rows refused with nothing changed, revert to the version
// before the last upgrade, and the owner's /v1/self/apps/:appId/upgrade… routes.
import { describe, expect, it } from "vitest";
import { call, expectError, json } from "../helpers";
import { installer, listTemplate, publisher, todoDefinition, todoManifest, type Publisher } from "./fixtures";

type Obj = Record<string, unknown>;

async function installed(pub: Publisher) {
  const me = await installer();
  const app = await json<{ app_id: string }>(await call(`/v1/community/templates/${pub.handle}/todo/install`, { key: me.agent.api_key, json: { config: { greeting: "Hi" } } }), 201);
  return { ...me, appId: app.app_id, path: `/v1/apps/${app.app_id}` };
}

async function liveState(key: string, path: string): Promise<{ version: number | null; html: string }> {
  const detail = await json<{ current_version: number | null }>(await call(path, { key }), 200);
  const doc = await json<{ html: string }>(await call(`${path}/document`, { key }), 200);
  return { version: detail.current_version, html: doc.html };
}

const WITH_NOTE = { ...todoDefinition, properties: { ...todoDefinition.properties, note: { type: "string" } } };

describe("upgrade and revert", () => {
  it("preview → apply (expect_version pinned) → revert, and the document follows", async () => {
    const pub = await publisher();
    await listTemplate(pub, { version: "1.0.0" });
    const me = await installed(pub);
    const key = me.agent.api_key;
    const none = await json<Obj>(await call(`${me.path}/upgrade`, { key }), 200);
    expect(none).toMatchObject({ template: `${pub.handle}/todo`, available: false, from_version: "1.0.0", to_version: null, compat: null, revert_available: false });
    await expectError(await call(`${me.path}/upgrade`, { key, json: {} }), 409, "conflict");

    const next = await listTemplate(pub, { version: "1.1.0", manifest: todoManifest({}, WITH_NOTE), html: "<!doctype html><title>Todo</title><h1>Todo 1.1</h1>", changelog: "Notes on todos" });
    const preview = await json<Obj>(await call(`${me.path}/upgrade`, { key }), 200);
    expect(preview).toEqual({
      template: `${pub.handle}/todo`, available: true, from_version: "1.0.0", to_version: "1.1.0", changelog: "Notes on todos", snapshot_id: next,
      compat: "clean", breaks: [], disclosure_breaks: [],
      permissions: { external_hosts: [], embeds: [], capabilities: [], cdn: false, offline: false, webhook_rules: [], is_empty: true },
      permission_lines: [], blocked: false, blocked_reason: null, revert_available: false,
    });

    const before = await liveState(key, me.path);
    const moved = await expectError(await call(`${me.path}/upgrade`, { key, json: { expect_version: "1.2.0" } }), 409, "conflict");
    expect(moved.details).toMatchObject({ expected: "1.2.0", to_version: "1.1.0" });
    expect(await liveState(key, me.path)).toEqual(before);

    const applied = await json<Obj>(await call(`${me.path}/upgrade`, { key, json: { expect_version: "1.1.0" } }), 200);
    expect(applied).toEqual({ from_version: "1.0.0", to_version: "1.1.0", snapshot_id: next, previous_version_id: before.version });
    const after = await liveState(key, me.path);
    expect(after.version).toBe(before.version! + 1);
    expect(after.html).toContain("Todo 1.1");
    // The seeded rows stayed, and the new field is writable.
    const noted = await json<{ row: { key: string } }>(await call(`${me.path}/collections/todos`, { key, json: { data: { title: "x", note: "new field" } } }), 201);
    expect(await json<Obj>(await call(`${me.path}/upgrade`, { key }), 200)).toMatchObject({ available: false, from_version: "1.1.0", revert_available: true });
    // Going back while a live row uses the new field would strand it: refused, nothing changed.
    const stranding = await expectError(await call(`${me.path}/upgrade/revert`, { key, json: {} }), 422, "schema_incompatible_upgrade");
    expect(JSON.stringify(stranding.details)).toContain(noted.row.key);
    expect(await liveState(key, me.path)).toEqual(after);
    await call(`${me.path}/collections/todos/${noted.row.key}`, { key, method: "DELETE" });

    const reverted = await json<Obj>(await call(`${me.path}/upgrade/revert`, { key, json: {} }), 200);
    expect(reverted).toEqual({ version_id: after.version! + 1, template_version: "1.0.0" });
    expect((await liveState(key, me.path)).html).not.toContain("Todo 1.1");
    expect(await json<Obj>(await call(`${me.path}/upgrade`, { key }), 200)).toMatchObject({ available: true, from_version: "1.0.0", to_version: "1.1.0", revert_available: false });
    await expectError(await call(`${me.path}/upgrade/revert`, { key, json: {} }), 409, "conflict");
  });

  it("a version that would strand rows: previewed as blocked, refused 422 schema_incompatible_upgrade, nothing changed", async () => {
    const pub = await publisher();
    await listTemplate(pub, { version: "1.0.0" });
    const me = await installed(pub);
    const key = me.agent.api_key;
    const narrowed = { ...todoDefinition, properties: { title: { type: "string", maxLength: 5 }, done: { type: "boolean" } } };
    await listTemplate(pub, { version: "2.0.0", manifest: todoManifest({}, narrowed) });
    const preview = await json<{ compat: string; blocked: boolean; blocked_reason: string; breaks: unknown[] }>(await call(`${me.path}/upgrade`, { key }), 200);
    expect(preview).toMatchObject({ compat: "incompatible", blocked: true, blocked_reason: "incompatible" });
    expect(preview.breaks.length).toBeGreaterThan(0);
    const before = await liveState(key, me.path);
    const err = await expectError(await call(`${me.path}/upgrade`, { key, json: { accept_permissions: true } }), 422, "schema_incompatible_upgrade");
    expect((err.details?.breaks as unknown[]).length).toBeGreaterThan(0);
    expect(await liveState(key, me.path)).toEqual(before);
  });

  it("more permissions need accept_permissions; accepted, the version is deployed", async () => {
    const pub = await publisher();
    await listTemplate(pub, { version: "1.0.0" });
    const me = await installed(pub);
    const key = me.agent.api_key;
    await listTemplate(pub, { version: "1.2.0", manifest: todoManifest({ externalHosts: ["https://api.example.com"] }) });
    const preview = await json<Obj>(await call(`${me.path}/upgrade`, { key }), 200);
    expect(preview).toMatchObject({
      available: true, compat: "forced", blocked: false,
      permissions: { external_hosts: ["https://api.example.com"], embeds: [], capabilities: [], cdn: false, offline: false, webhook_rules: [], is_empty: false },
      permission_lines: ["The page may connect to https://api.example.com."],
    });
    const before = await liveState(key, me.path);
    const err = await expectError(await call(`${me.path}/upgrade`, { key, json: {} }), 409, "conflict");
    expect(err.details).toMatchObject({ reason: "permissions_not_accepted" });
    expect(await liveState(key, me.path)).toEqual(before);
    expect(await json<Obj>(await call(`${me.path}/upgrade`, { key, json: { accept_permissions: true } }), 200)).toMatchObject({ to_version: "1.2.0" });
  });

  it("the owner's /v1/self/apps routes: badge, dismiss, upgrade and revert; another agent's key: 404", async () => {
    const pub = await publisher();
    await listTemplate(pub, { version: "1.0.0" });
    const me = await installed(pub);
    await listTemplate(pub, { version: "1.0.1", manifest: todoManifest({}, WITH_NOTE) });
    const self = `/v1/self/apps/${me.appId}/upgrade`;
    const session = me.human.session;
    expect(await json<Obj>(await call(self, { session }), 200)).toMatchObject({ app_id: me.appId, available: true, to_version: "1.0.1", badge: true, dismissed_version: null });
    expect(await json<Obj>(await call(`${self}/dismiss`, { session, json: {} }), 200)).toMatchObject({ badge: false, dismissed_version: "1.0.1" });
    expect(await json<Obj>(await call(self, { session, json: { expect_version: "1.0.1" } }), 200)).toMatchObject({ from_version: "1.0.0", to_version: "1.0.1" });
    expect(await json<Obj>(await call(`${self}/revert`, { session, json: {} }), 200)).toMatchObject({ template_version: "1.0.0" });
    const stranger = await installer();
    await expectError(await call(`${me.path}/upgrade`, { key: stranger.agent.api_key }), 404, "app_not_found");
    await expectError(await call(`${me.path}/upgrade`, { key: stranger.agent.api_key, json: {} }), 404, "app_not_found");
    await expectError(await call(`${me.path}/upgrade`, { key: me.agent.api_key, json: { accept_permissions: "yes" } }), 400, "invalid_request");
  });
});
