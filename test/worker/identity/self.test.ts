// /v1/self/* (CONTRACT §4): claim codes, my agents (list, rename, pause, resume, revoke,
// rotate) and my profile. Every mutating call needs a same-origin Origin or Referer;
// another human's agent is not_found; every refusal leaves D1 unchanged.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { API, call, claimedAgent, count, expectError, json, keyStatus, mintClaimCode, register, signIn, snapshot, type SignedIn } from "../helpers";

interface OwnedAgent {
  id: string;
  name: string | null;
  status: "active" | "paused" | "revoked";
  registered_via: "direct" | "device";
  claimed_at: string | null;
  created_at: string;
  key_prefixes: string[];
  keys: Array<{ key_prefix: string; created_at: string; last_used_at: string | null; revoked_at: string | null }>;
}

function act(human: SignedIn, agentId: string, verb: string): Promise<Response> {
  return call(`/v1/self/agents/${agentId}/${verb}`, { method: "POST", session: human.session });
}

describe("POST /v1/self/claim-codes", () => {
  it("201 { code: cc_…, expires_at } 15 minutes ahead; only the hash is stored", async () => {
    const human = await signIn();
    const before = await count("claim_codes", "human_id = ?1", human.humanId);
    const res = await call("/v1/self/claim-codes", { method: "POST", session: human.session });
    const body = await json<{ code: string; expires_at: string }>(res, 201);
    expect(Object.keys(body).sort()).toEqual(["code", "expires_at"]);
    expect(body.code).toMatch(/^cc_[0-9a-f]{32}$/);
    const ttl = Date.parse(body.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(14 * 60_000);
    expect(ttl).toBeLessThanOrEqual(15 * 60_000);
    expect(new Date(body.expires_at).toISOString()).toBe(body.expires_at);
    expect(await count("claim_codes", "human_id = ?1", human.humanId)).toBe(before + 1);
    expect(JSON.stringify((await env.DB.prepare("SELECT * FROM claim_codes").all()).results)).not.toContain(body.code.slice(3));
  });

  it("each call mints a distinct code", async () => {
    const human = await signIn();
    const a = await mintClaimCode(human);
    const b = await mintClaimCode(human);
    expect(a.code).not.toBe(b.code);
  });

  it("without a session → 401 unauthorized, no code minted", async () => {
    const agent = await register();
    const before = await snapshot();
    await expectError(await call("/v1/self/claim-codes", { method: "POST", origin: API }), 401, "unauthorized");
    await expectError(await call("/v1/self/claim-codes", { method: "POST", headers: { cookie: "relay_session=sess_00000000000000000000000000000000", origin: API } }), 401, "unauthorized");
    // An agent key is not a session.
    await expectError(await call("/v1/self/claim-codes", { method: "POST", key: agent.api_key, origin: API }), 401, "unauthorized");
    expect(await snapshot()).toEqual(before);
  });

  it("an expired session → 401 unauthorized", async () => {
    const human = await signIn();
    await env.DB.prepare("UPDATE sessions SET expires_at = ?1 WHERE human_id = ?2").bind(new Date(Date.now() - 1000).toISOString(), human.humanId).run();
    await expectError(await call("/v1/self/claim-codes", { method: "POST", session: human.session }), 401, "unauthorized");
  });

  const crossSite: Array<[string, { origin?: string | null; referer?: string }]> = [
    ["no Origin and no Referer", { origin: null }],
    ["a foreign Origin", { origin: "https://evil.example" }],
    ["a lookalike Origin (other port)", { origin: "http://localhost:8788" }],
    ["a lookalike Origin (other scheme)", { origin: "https://localhost:8787" }],
    ["a lookalike Origin (suffix)", { origin: "http://localhost:8787.evil.example" }],
    ["Origin: null and no Referer", { origin: "null" }],
    ["a malformed Origin", { origin: "not a url" }],
    ["a foreign Referer without Origin", { origin: null, referer: "https://evil.example/page" }],
    ["a foreign Origin even with a same-origin Referer", { origin: "https://evil.example", referer: `${API}/console` }],
  ];
  for (const [label, headers] of crossSite) {
    it(`${label} → 403 csrf_origin_mismatch, no code minted`, async () => {
      const human = await signIn();
      const before = await snapshot();
      const err = await expectError(await call("/v1/self/claim-codes", { method: "POST", session: human.session, ...headers }), 403, "csrf_origin_mismatch");
      expect(err.details?.expected_origin).toBe(API);
      expect(await snapshot()).toEqual(before);
    });
  }

  it("falls back to a same-origin Referer when Origin is absent", async () => {
    const human = await signIn();
    await json(await call("/v1/self/claim-codes", { method: "POST", session: human.session, origin: null, referer: `${API}/agents?tab=1` }), 201);
  });
});

describe("GET /v1/self/agents", () => {
  it("lists my agents with live key prefixes, { items, next_cursor }", async () => {
    const human = await signIn();
    const a = await claimedAgent(human, "alpha");
    const b = await claimedAgent(human, "beta");
    const sibling = await json<{ key_prefix: string }>(await call("/v1/keys", { method: "POST", key: b.api_key }), 201);
    await register("unclaimed-stranger");

    const body = await json<{ items: OwnedAgent[]; next_cursor: string | null }>(await call("/v1/self/agents", { session: human.session }), 200);
    expect(Object.keys(body).sort()).toEqual(["items", "next_cursor"]);
    expect(body.next_cursor).toBeNull();
    expect(body.items.map((x) => x.id).sort()).toEqual([a.agent_id, b.agent_id].sort());
    const alpha = body.items.find((x) => x.id === a.agent_id)!;
    expect(Object.keys(alpha).sort()).toEqual(["claimed_at", "created_at", "id", "key_prefixes", "keys", "name", "registered_via", "status"]);
    expect(alpha).toMatchObject({ name: "alpha", status: "active", registered_via: "direct", key_prefixes: [a.key_prefix] });
    expect(alpha.keys).toHaveLength(1);
    expect(Object.keys(alpha.keys[0]).sort()).toEqual(["created_at", "key_prefix", "last_used_at", "revoked_at"]);
    const beta = body.items.find((x) => x.id === b.agent_id)!;
    expect(beta.key_prefixes.sort()).toEqual([b.key_prefix, sibling.key_prefix].sort());
    // Lists show prefixes only, never a key.
    expect(JSON.stringify(body)).not.toContain(a.api_key);
    expect(JSON.stringify(body)).not.toContain(b.api_key);
  });

  it("shows nothing of another human's agents", async () => {
    const owner = await signIn();
    await claimedAgent(owner, "private");
    const stranger = await signIn();
    expect(await json(await call("/v1/self/agents", { session: stranger.session }), 200)).toEqual({ items: [], next_cursor: null });
  });

  it("needs a session (a GET needs no Origin)", async () => {
    await expectError(await call("/v1/self/agents"), 401, "unauthorized");
    const human = await signIn();
    await json(await call("/v1/self/agents", { session: human.session, origin: null }), 200);
    await json(await call("/v1/self/agents", { session: human.session, origin: "https://evil.example" }), 200);
  });
});

describe("PATCH /v1/self/agents/:id", () => {
  it("renames, and null clears the name", async () => {
    const human = await signIn();
    const agent = await claimedAgent(human, "old-name");
    const renamed = await json<OwnedAgent>(await call(`/v1/self/agents/${agent.agent_id}`, { method: "PATCH", session: human.session, json: { name: "  new-name " } }), 200);
    expect(renamed).toMatchObject({ id: agent.agent_id, name: "new-name", status: "active" });
    expect((await json<{ name: string }>(await call("/v1/keys", { key: agent.api_key }), 200)).name).toBe("new-name");
    const cleared = await json<OwnedAgent>(await call(`/v1/self/agents/${agent.agent_id}`, { method: "PATCH", session: human.session, json: { name: null } }), 200);
    expect(cleared.name).toBeNull();
    expect((await json<{ name: string | null }>(await call("/v1/keys", { key: agent.api_key }), 200)).name).toBeNull();
  });

  const bad: Array<[string, Parameters<typeof call>[1], string]> = [
    ["an empty name", { json: { name: "" } }, "name"],
    ["a name over 64 characters", { json: { name: "z".repeat(65) } }, "name"],
    ["a name with control characters", { json: { name: "a\u0000b" } }, "name"],
    ["a missing name", { json: {} }, "name"],
    ["a wrong type", { json: { name: 1 } }, "name"],
    ["an unknown field", { json: { name: "ok", owner_human_id: "h_x" } }, "owner_human_id"],
    ["no body", {}, "body"],
  ];
  for (const [label, opts, field] of bad) {
    it(`${label} → 400 invalid_request (details.field ${field}), name unchanged`, async () => {
      const human = await signIn();
      const agent = await claimedAgent(human, "keep-me");
      const before = await snapshot();
      const err = await expectError(await call(`/v1/self/agents/${agent.agent_id}`, { method: "PATCH", session: human.session, ...opts }), 400, "invalid_request");
      expect(err.details?.field).toBe(field);
      expect(await snapshot()).toEqual(before);
    });
  }

  it("cross-site → 403 csrf_origin_mismatch, name unchanged", async () => {
    const human = await signIn();
    const agent = await claimedAgent(human, "stay");
    const before = await snapshot();
    await expectError(await call(`/v1/self/agents/${agent.agent_id}`, { method: "PATCH", session: human.session, origin: "https://evil.example", json: { name: "hijacked" } }), 403, "csrf_origin_mismatch");
    expect(await snapshot()).toEqual(before);
  });
});

describe("agent actions: pause, resume, revoke-key, rotate-key", () => {
  it("pause → the agent's keys answer 401 invalid_api_key (paused) at once; resume → they work again", async () => {
    const human = await signIn();
    const agent = await claimedAgent(human, "pausable");
    const sibling = await json<{ api_key: string }>(await call("/v1/keys", { method: "POST", key: agent.api_key }), 201);

    const paused = await json<OwnedAgent>(await act(human, agent.agent_id, "pause"), 200);
    expect(paused).toMatchObject({ id: agent.agent_id, status: "paused" });
    for (const key of [agent.api_key, sibling.api_key]) {
      const err = await expectError(await call("/v1/keys", { key }), 401, "invalid_api_key");
      expect(err.details).toEqual({ reason: "paused" });
    }
    // Pausing twice is harmless.
    expect((await json<OwnedAgent>(await act(human, agent.agent_id, "pause"), 200)).status).toBe("paused");

    const resumed = await json<OwnedAgent>(await act(human, agent.agent_id, "resume"), 200);
    expect(resumed.status).toBe("active");
    expect(await keyStatus(agent.api_key)).toBe(200);
    expect(await keyStatus(sibling.api_key)).toBe(200);
  });

  it("revoke-key → every key 401 (revoked); resume does not un-revoke; idempotent", async () => {
    const human = await signIn();
    const agent = await claimedAgent(human, "doomed");
    const revoked = await json<OwnedAgent>(await act(human, agent.agent_id, "revoke-key"), 200);
    expect(revoked).toMatchObject({ status: "revoked", key_prefixes: [] });
    expect(revoked.keys.every((k) => typeof k.revoked_at === "string")).toBe(true);
    const err = await expectError(await call("/v1/keys", { key: agent.api_key }), 401, "invalid_api_key");
    expect(err.details).toEqual({ reason: "revoked" });

    const resumed = await json<OwnedAgent>(await act(human, agent.agent_id, "resume"), 200);
    expect(resumed.status).toBe("revoked");
    expect(await keyStatus(agent.api_key)).toBe(401);
    const firstRevokedAt = revoked.keys[0].revoked_at;
    const again = await json<OwnedAgent>(await act(human, agent.agent_id, "revoke-key"), 200);
    expect(again.keys[0].revoked_at).toBe(firstRevokedAt);
  });

  it("rotate-key → the old keys 401 at once, the new key works and is shown once", async () => {
    const human = await signIn();
    const agent = await claimedAgent(human, "rotor");
    const sibling = await json<{ api_key: string }>(await call("/v1/keys", { method: "POST", key: agent.api_key }), 201);
    const res = await act(human, agent.agent_id, "rotate-key");
    const body = await json<{ agent_id: string; api_key: string; key_prefix: string; created_at: string }>(res, 200);
    expect(Object.keys(body).sort()).toEqual(["agent_id", "api_key", "created_at", "key_prefix"]);
    expect(body.agent_id).toBe(agent.agent_id);
    expect(body.api_key).toMatch(/^svc_[0-9a-f]{32}$/);
    expect(body.key_prefix).toBe(body.api_key.slice(0, 10));
    await expectError(await call("/v1/keys", { key: agent.api_key }), 401, "invalid_api_key");
    await expectError(await call("/v1/keys", { key: sibling.api_key }), 401, "invalid_api_key");
    const view = await json<{ agent_id: string }>(await call("/v1/keys", { key: body.api_key }), 200);
    expect(view.agent_id).toBe(agent.agent_id);

    const list = await json<{ items: OwnedAgent[] }>(await call("/v1/self/agents", { session: human.session }), 200);
    const row = list.items.find((a) => a.id === agent.agent_id)!;
    expect(row.status).toBe("active");
    expect(row.key_prefixes).toEqual([body.key_prefix]);
    expect(JSON.stringify(list)).not.toContain(body.api_key);
  });

  it("rotate-key un-revokes nothing: a revoked agent gets a working new key, the old stays dead", async () => {
    const human = await signIn();
    const agent = await claimedAgent(human);
    await json(await act(human, agent.agent_id, "revoke-key"), 200);
    const rotated = await json<{ api_key: string }>(await act(human, agent.agent_id, "rotate-key"), 200);
    expect(await keyStatus(rotated.api_key)).toBe(200);
    expect(await keyStatus(agent.api_key)).toBe(401);
  });

  for (const verb of ["pause", "resume", "revoke-key", "rotate-key"]) {
    it(`${verb} on another human's agent → 404 not_found, nothing changes`, async () => {
      const owner = await signIn();
      const agent = await claimedAgent(owner, "not-yours");
      const stranger = await signIn();
      const before = await snapshot();
      await expectError(await act(stranger, agent.agent_id, verb), 404, "not_found");
      expect(await snapshot()).toEqual(before);
      expect(await keyStatus(agent.api_key)).toBe(200);
    });

    it(`${verb} on an unclaimed or unknown agent → 404 not_found`, async () => {
      const human = await signIn();
      const stray = await register();
      const before = await snapshot();
      await expectError(await act(human, stray.agent_id, verb), 404, "not_found");
      await expectError(await act(human, "a000000000000000000000", verb), 404, "not_found");
      expect(await snapshot()).toEqual(before);
    });

    it(`${verb} cross-site → 403 csrf_origin_mismatch; without a session → 401`, async () => {
      const human = await signIn();
      const agent = await claimedAgent(human);
      const before = await snapshot();
      await expectError(await call(`/v1/self/agents/${agent.agent_id}/${verb}`, { method: "POST", session: human.session, origin: "https://evil.example" }), 403, "csrf_origin_mismatch");
      await expectError(await call(`/v1/self/agents/${agent.agent_id}/${verb}`, { method: "POST", session: human.session, origin: null }), 403, "csrf_origin_mismatch");
      await expectError(await call(`/v1/self/agents/${agent.agent_id}/${verb}`, { method: "POST", origin: API }), 401, "unauthorized");
      expect(await snapshot()).toEqual(before);
      expect(await keyStatus(agent.api_key)).toBe(200);
    });
  }

  it("rename on another human's agent → 404 not_found", async () => {
    const owner = await signIn();
    const agent = await claimedAgent(owner, "mine");
    const stranger = await signIn();
    const before = await snapshot();
    await expectError(await call(`/v1/self/agents/${agent.agent_id}`, { method: "PATCH", session: stranger.session, json: { name: "stolen" } }), 404, "not_found");
    expect(await snapshot()).toEqual(before);
  });
});

describe("/v1/self/profile", () => {
  it("GET: { id, email, name, display_name, marketing_consent } with the email's local part as display name", async () => {
    const human = await signIn();
    const body = await json<Record<string, unknown>>(await call("/v1/self/profile", { session: human.session }), 200);
    expect(body).toEqual({ id: human.humanId, email: human.email, name: null, display_name: human.email.split("@")[0], marketing_consent: false });
  });

  it("PATCH sets the name (trimmed); null and \"\" clear it", async () => {
    const human = await signIn();
    const named = await json<Record<string, unknown>>(await call("/v1/self/profile", { method: "PATCH", session: human.session, json: { name: "  Ada Lovelace " } }), 200);
    expect(named).toMatchObject({ name: "Ada Lovelace", display_name: "Ada Lovelace" });
    expect(await json(await call("/v1/self/profile", { session: human.session }), 200)).toMatchObject({ name: "Ada Lovelace" });

    const viaNull = await json<Record<string, unknown>>(await call("/v1/self/profile", { method: "PATCH", session: human.session, json: { name: null } }), 200);
    expect(viaNull).toMatchObject({ name: null, display_name: human.email.split("@")[0] });

    await json(await call("/v1/self/profile", { method: "PATCH", session: human.session, json: { name: "Grace" } }), 200);
    const viaEmpty = await json<Record<string, unknown>>(await call("/v1/self/profile", { method: "PATCH", session: human.session, json: { name: "" } }), 200);
    expect(viaEmpty).toMatchObject({ name: null, display_name: human.email.split("@")[0] });
    const viaBlank = await json<Record<string, unknown>>(await call("/v1/self/profile", { method: "PATCH", session: human.session, json: { name: "   " } }), 200);
    expect(viaBlank.name).toBeNull();
  });

  const bad: Array<[string, Parameters<typeof call>[1], string]> = [
    ["a name over 100 characters", { json: { name: "p".repeat(101) } }, "name"],
    ["a name with control characters", { json: { name: "Eve\u0000\u001b[2J" } }, "name"],
    ["a wrong type", { json: { name: 3 } }, "name"],
    ["a missing name", { json: {} }, "name"],
    ["an unknown field", { json: { name: "x", email: "other@example.com" } }, "email"],
    ["marketing consent is not writable here", { json: { name: "x", marketing_consent: true } }, "marketing_consent"],
    ["malformed JSON", { body: '{"name":', contentType: "application/json" }, "body"],
  ];
  for (const [label, opts, field] of bad) {
    it(`PATCH with ${label} → 400 invalid_request (details.field ${field}), profile unchanged`, async () => {
      const human = await signIn();
      await json(await call("/v1/self/profile", { method: "PATCH", session: human.session, json: { name: "Before" } }), 200);
      const err = await expectError(await call("/v1/self/profile", { method: "PATCH", session: human.session, ...opts }), 400, "invalid_request");
      expect(err.details?.field).toBe(field);
      const row = await env.DB.prepare("SELECT name, email FROM humans WHERE id = ?1").bind(human.humanId).first();
      expect(row).toEqual({ name: "Before", email: human.email });
    });
  }

  it("PATCH cross-site → 403 csrf_origin_mismatch, profile unchanged; without a session → 401", async () => {
    const human = await signIn();
    await expectError(await call("/v1/self/profile", { method: "PATCH", session: human.session, origin: "https://evil.example", json: { name: "pwned" } }), 403, "csrf_origin_mismatch");
    await expectError(await call("/v1/self/profile", { method: "PATCH", origin: API, json: { name: "anon" } }), 401, "unauthorized");
    await expectError(await call("/v1/self/profile"), 401, "unauthorized");
    const row = await env.DB.prepare("SELECT name FROM humans WHERE id = ?1").bind(human.humanId).first();
    expect(row).toEqual({ name: null });
  });
});
