// /v1/keys (WIRE §2.1): the caller's own key as one object, sibling keys, and revoking
// the key a request is made with (never another agent's).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, count, expectError, json, keyStatus, register, snapshot } from "../helpers";
import { waitFor } from "../../support/wait";

interface KeyView {
  agent_id: string;
  name: string | null;
  key_prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

describe("GET /v1/keys", () => {
  it("returns ONE object with exactly the WIRE §2.1 fields", async () => {
    const agent = await register("keyholder");
    const body = await json<KeyView>(await call("/v1/keys", { key: agent.api_key }), 200);
    expect(Array.isArray(body)).toBe(false);
    expect(Object.keys(body).sort()).toEqual(["agent_id", "created_at", "key_prefix", "last_used_at", "name", "revoked_at"]);
    expect(body.agent_id).toBe(agent.agent_id);
    expect(body.name).toBe("keyholder");
    expect(body.key_prefix).toBe(agent.api_key.slice(0, 10));
    expect(new Date(body.created_at).toISOString()).toBe(body.created_at);
    expect(body.revoked_at).toBeNull();
    expect(body.last_used_at === null || typeof body.last_used_at === "string").toBe(true);
  });

  it("name is null for a nameless agent", async () => {
    const agent = await register();
    expect((await json<KeyView>(await call("/v1/keys", { key: agent.api_key }), 200)).name).toBeNull();
  });

  it("records last use", async () => {
    const agent = await register();
    await json(await call("/v1/keys", { key: agent.api_key }), 200);
    // The touch runs after the response (waitUntil): poll until it has landed.
    const seen = await waitFor(async () => (await json<KeyView>(await call("/v1/keys", { key: agent.api_key }), 200)).last_used_at, { message: "last_used_at recorded" });
    expect(new Date(seen).toISOString()).toBe(seen);
  });

  it("no key → 401 unauthorized; unknown key → 401 invalid_api_key", async () => {
    await expectError(await call("/v1/keys"), 401, "unauthorized");
    await expectError(await call("/v1/keys", { authorization: "Bearer nope" }), 401, "unauthorized");
    const err = await expectError(await call("/v1/keys", { key: "svc_ffffffffffffffffffffffffffffffff" }), 401, "invalid_api_key");
    expect(err.details).toEqual({ reason: "unknown" });
    // A near miss of a real key is just as unknown.
    const agent = await register();
    const nearMiss = agent.api_key.slice(0, -1) + (agent.api_key.endsWith("0") ? "1" : "0");
    await expectError(await call("/v1/keys", { key: nearMiss }), 401, "invalid_api_key");
    await expectError(await call("/v1/keys", { key: agent.api_key.toUpperCase().replace("SVC_", "svc_") }), 401, "invalid_api_key");
  });
});

describe("POST /v1/keys", () => {
  it("mints a working sibling key: 201 { agent_id, api_key, key_prefix, name, created_at }", async () => {
    const agent = await register("twin");
    const before = await count("agent_keys", "agent_id = ?1", agent.agent_id);
    const res = await call("/v1/keys", { method: "POST", key: agent.api_key });
    const body = await json<Record<string, string>>(res, 201);
    expect(Object.keys(body).sort()).toEqual(["agent_id", "api_key", "created_at", "key_prefix", "name"]);
    expect(body.agent_id).toBe(agent.agent_id);
    expect(body.name).toBe("twin");
    expect(body.api_key).toMatch(/^svc_[0-9a-f]{32}$/);
    expect(body.api_key).not.toBe(agent.api_key);
    expect(body.key_prefix).toBe(body.api_key.slice(0, 10));
    expect(await count("agent_keys", "agent_id = ?1", agent.agent_id)).toBe(before + 1);
    const sibling = await json<KeyView>(await call("/v1/keys", { key: body.api_key }), 200);
    expect(sibling).toMatchObject({ agent_id: agent.agent_id, key_prefix: body.key_prefix, name: "twin" });
    expect(await keyStatus(agent.api_key)).toBe(200);
    const dump = JSON.stringify((await env.DB.prepare("SELECT * FROM agent_keys").all()).results);
    expect(dump).not.toContain(body.api_key.slice(4));
  });

  it("accepts an empty JSON object as the body", async () => {
    const agent = await register();
    await json(await call("/v1/keys", { method: "POST", key: agent.api_key, json: {} }), 201);
  });

  it("refuses unknown fields and malformed bodies without minting", async () => {
    const agent = await register();
    const before = await snapshot();
    const err = await expectError(await call("/v1/keys", { method: "POST", key: agent.api_key, json: { agent_id: "someone-else" } }), 400, "invalid_request");
    expect(err.details?.field).toBe("agent_id");
    await expectError(await call("/v1/keys", { method: "POST", key: agent.api_key, body: "[", contentType: "application/json" }), 400, "invalid_request");
    await expectError(await call("/v1/keys", { method: "POST", key: agent.api_key, json: [] }), 400, "invalid_request");
    expect(await snapshot()).toEqual(before);
  });

  it("without a key → 401 and nothing minted", async () => {
    const before = await snapshot();
    await expectError(await call("/v1/keys", { method: "POST" }), 401, "unauthorized");
    expect(await snapshot()).toEqual(before);
  });
});

describe("DELETE /v1/keys/:id", () => {
  it("another agent's id → 403 forbidden, and nothing is revoked", async () => {
    const me = await register("me");
    const victim = await register("victim");
    const before = await snapshot();
    await expectError(await call(`/v1/keys/${victim.agent_id}`, { method: "DELETE", key: me.api_key }), 403, "forbidden");
    await expectError(await call("/v1/keys/not-an-id", { method: "DELETE", key: me.api_key }), 403, "forbidden");
    // A key prefix or the key itself is not the agent id either.
    await expectError(await call(`/v1/keys/${me.key_prefix}`, { method: "DELETE", key: me.api_key }), 403, "forbidden");
    expect(await snapshot()).toEqual(before);
    expect(await keyStatus(me.api_key)).toBe(200);
    expect(await keyStatus(victim.api_key)).toBe(200);
  });

  it("own id → 204 with no body; that key → 401 invalid_api_key (revoked) while the sibling works", async () => {
    const agent = await register("rotating");
    const sibling = await json<{ api_key: string }>(await call("/v1/keys", { method: "POST", key: agent.api_key }), 201);
    const res = await call(`/v1/keys/${agent.agent_id}`, { method: "DELETE", key: agent.api_key });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");

    const err = await expectError(await call("/v1/keys", { key: agent.api_key }), 401, "invalid_api_key");
    expect(err.details).toEqual({ reason: "revoked" });
    const view = await json<KeyView>(await call("/v1/keys", { key: sibling.api_key }), 200);
    expect(view.agent_id).toBe(agent.agent_id);

    const rows = await env.DB.prepare("SELECT key_prefix, revoked_at FROM agent_keys WHERE agent_id = ?1 ORDER BY created_at").bind(agent.agent_id).all<{ key_prefix: string; revoked_at: string | null }>();
    expect(rows.results.find((r) => r.key_prefix === agent.key_prefix)!.revoked_at).toEqual(expect.any(String));
    expect(rows.results.filter((r) => r.revoked_at === null)).toHaveLength(1);

    // The revoked key cannot revoke again, mint, or claim.
    await expectError(await call(`/v1/keys/${agent.agent_id}`, { method: "DELETE", key: agent.api_key }), 401, "invalid_api_key");
    await expectError(await call("/v1/keys", { method: "POST", key: agent.api_key }), 401, "invalid_api_key");
  });

  it("revoking the only key makes every later call fail", async () => {
    const agent = await register();
    expect((await call(`/v1/keys/${agent.agent_id}`, { method: "DELETE", key: agent.api_key })).status).toBe(204);
    expect(await keyStatus(agent.api_key)).toBe(401);
    await expectError(await call("/v1/agents/claim", { method: "POST", key: agent.api_key, json: { code: "cc_x" } }), 401, "invalid_api_key");
  });

  it("without a key → 401 unauthorized", async () => {
    const agent = await register();
    await expectError(await call(`/v1/keys/${agent.agent_id}`, { method: "DELETE" }), 401, "unauthorized");
    expect(await keyStatus(agent.api_key)).toBe(200);
  });
});
