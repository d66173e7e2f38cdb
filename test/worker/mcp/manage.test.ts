// The managing tools over /mcp, each action against the real routes: members (add, list,
// roles, set_role, remove), grants (mint, list, revoke), credentials (mint, list, pause,
// resume, rotate, revoke), connections (create, list, consent_url, delete), ingest (list,
// rotate, signing secrets), transfer (start, status, cancel), key (list, mint, revoke) and
// the rest of apps (audit, share link, list_deleted, purge, wake); and per-action argument
// checks in the §1.4 shape.
import { describe, expect, it } from "vitest";
import { API, call, claimedAgent, freshEmail, signIn } from "../helpers";
import { tool } from "./rpc";

const MANIFEST = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  "x-service-manifest": {
    app: { name: "Crew" },
    roles: { helper: { label: "Helper" } },
    collections: { notes: { read: ["owner", "helper"], write: ["owner", "helper"], delete: ["owner"] } },
    ingest: [{ name: "inbox", collection: "notes", map: { title: "title" } }],
  },
};

async function ok(key: string, name: string, args: Record<string, unknown>): Promise<any> {
  const answer = await tool(key, name, args);
  expect(answer.isError, `${name} ${JSON.stringify(args)}: ${answer.text}`).toBe(false);
  return answer.value;
}

async function setup() {
  const agent = await claimedAgent(await signIn());
  const app = await ok(agent.api_key, "deploy_app", { html: "<!doctype html><p>crew</p>", manifest: MANIFEST, visibility: "link" });
  return { key: agent.api_key, appId: app.app_id as string };
}

describe("managing tools over MCP", () => {
  it("members and grants", async () => {
    const { key, appId } = await setup();
    const helper = await signIn();
    const added = await ok(key, "members", { action: "add", app_id: appId, email: helper.email, custom_roles: ["helper"] });
    expect(added.member).toMatchObject({ humanId: helper.humanId });
    expect((await ok(key, "members", { action: "list", app_id: appId })).members.length).toBeGreaterThanOrEqual(2);
    expect((await ok(key, "members", { action: "roles", app_id: appId })).roles.map((r: { name: string }) => r.name)).toContain("helper");
    expect((await ok(key, "members", { action: "set_role", app_id: appId, human_id: helper.humanId, custom_roles: [] })).member).toBeDefined();
    expect(await ok(key, "members", { action: "remove", app_id: appId, human_id: helper.humanId })).toEqual({ app_id: appId, human_id: helper.humanId, removed: true });
    const setRole = await tool(key, "members", { action: "set_role", app_id: appId, human_id: helper.humanId });
    expect(setRole.value).toEqual({ error: "invalid_args", message: expect.stringContaining("custom_roles") });

    const grant = await ok(key, "grants", { action: "mint", app_id: appId, role: "helper", ttl_seconds: 3600, pin_row_key: "r1" });
    expect((await ok(key, "grants", { action: "list", app_id: appId })).grants.map((g: { id: string }) => g.id)).toContain(grant.id);
    expect(await ok(key, "grants", { action: "revoke", app_id: appId, grant_id: grant.id })).toEqual({ app_id: appId, grant_id: grant.id, revoked: true });
    const both = await tool(key, "grants", { action: "mint", app_id: appId, role: "helper", pin_row_key: "a", pin_where: [{ field: "x", op: "eq", value: 1 }] });
    expect(both.value.error).toBe("invalid_args");
    const builtIn = await tool(key, "grants", { action: "mint", app_id: appId, role: "owner" });
    expect(builtIn.value).toMatchObject({ error: expect.any(String), status: 400 });
  });

  it("credentials, connections and ingest hooks", async () => {
    const { key, appId } = await setup();
    const minted = await ok(key, "credentials", { action: "mint", app_id: appId, grants: [{ collection: "notes", ops: ["read"] }], label: "backend" });
    expect(minted.token).toMatch(/^svcs_/);
    expect((await ok(key, "credentials", { action: "list", app_id: appId })).credentials).toHaveLength(1);
    expect(await ok(key, "credentials", { action: "pause", app_id: appId, credential_id: minted.id })).toEqual({ app_id: appId, credential_id: minted.id, paused: true });
    expect(await ok(key, "credentials", { action: "resume", app_id: appId, credential_id: minted.id })).toEqual({ app_id: appId, credential_id: minted.id, resumed: true });
    expect((await ok(key, "credentials", { action: "rotate", app_id: appId, credential_id: minted.id, overlap_seconds: 0 })).token).toMatch(/^svcs_/);
    expect(await ok(key, "credentials", { action: "revoke", app_id: appId, credential_id: minted.id })).toEqual({ app_id: appId, credential_id: minted.id, revoked: true });
    expect((await tool(key, "credentials", { action: "pause", app_id: appId })).value).toEqual({ error: "invalid_args", message: "pause needs credential_id" });

    const created = await ok(key, "connections", { action: "create", app_id: appId, name: "crm", allowed_host: "api.example.com", header_value: "Bearer s3cret" });
    expect(created.connection).toMatchObject({ name: "crm", kind: "static" });
    expect(JSON.stringify(created)).not.toContain("s3cret");
    expect((await ok(key, "connections", { action: "list", app_id: appId })).connections).toHaveLength(1);
    expect(await ok(key, "connections", { action: "consent_url", app_id: appId, name: "crm" })).toEqual({
      app_id: appId, name: "crm", authorize_url: `${API}/v1/apps/${appId}/connections/crm/authorize`,
    });
    expect(await ok(key, "connections", { action: "delete", app_id: appId, name: "crm" })).toEqual({ app_id: appId, name: "crm", deleted: true });
    expect((await tool(key, "connections", { action: "create", app_id: appId, name: "x", kind: "oauth2", allowed_host: "a.example.com" })).value.error).toBe("invalid_args");

    const hooks = await ok(key, "ingest", { action: "list", app_id: appId });
    expect(hooks.hooks.map((h: { name: string }) => h.name)).toEqual(["inbox"]);
    const rotated = await ok(key, "ingest", { action: "rotate", app_id: appId, name: "inbox" });
    expect(rotated.hook.url).not.toBe(hooks.hooks[0].url);
    const secret = await ok(key, "ingest", { action: "set_signing_secret", app_id: appId, name: "inbox", grace_seconds: 60 });
    expect(secret).toMatchObject({ secret: expect.any(String), fingerprint: expect.any(String) });
    expect(await ok(key, "ingest", { action: "clear_signing_secret", app_id: appId, name: "inbox" })).toMatchObject({ ok: true });
  });

  it("transfer, key and the rest of apps", async () => {
    const { key, appId } = await setup();
    const started = await ok(key, "transfer", { action: "start", app_id: appId, email: freshEmail("heir"), keep_as_member: false });
    expect(started).toMatchObject({ transfer: { app_id: appId, keep_as_member: false }, ownership_moved: false, note: expect.any(String) });
    expect((await ok(key, "transfer", { action: "status", app_id: appId })).transfer.app_id).toBe(appId);
    expect(await ok(key, "transfer", { action: "cancel", app_id: appId })).toEqual({ app_id: appId, cancelled: true });

    expect((await ok(key, "apps", { action: "share_link_rotate", app_id: appId })).share_url).toEqual(expect.any(String));
    expect(await ok(key, "apps", { action: "audit" })).toBeDefined();
    expect((await ok(key, "apps", { action: "wake", app_id: appId })).id).toBe(appId);
    await ok(key, "apps", { action: "delete", app_id: appId });
    expect((await ok(key, "apps", { action: "list_deleted" })).items.map((a: { id: string }) => a.id)).toContain(appId);
    expect(await ok(key, "apps", { action: "purge", app_id: appId })).toEqual({ app_id: appId, purged: true });
    expect((await tool(key, "apps", { action: "show", app_id: appId })).value.error).toBe("app_not_found");

    const own = await ok(key, "key", { action: "list" });
    expect(own).toMatchObject({ agent_id: expect.any(String), key_prefix: expect.any(String) });
    const sibling = await ok(key, "key", { action: "mint" });
    expect(sibling.api_key).toMatch(/^svc_/);
    expect(await ok(sibling.api_key, "key", { action: "revoke", confirm: true })).toEqual({ revoked: true, agent_id: own.agent_id });
    // The revoked key's next call is the relay's 401.
    const after = await call("/mcp", { method: "POST", key: sibling.api_key, json: { jsonrpc: "2.0", id: 1, method: "tools/list" }, headers: { accept: "application/json, text/event-stream" } });
    expect(after.status).toBe(401);
  });
});
