// POST /v1/agents/claim (WIRE §2.1) and the claim codes behind it (CONTRACT §4): a code
// binds an unclaimed agent once, one way; every refusal leaves agents and codes untouched.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectError, json, keyStatus, mintClaimCode, register, signIn, snapshot } from "../helpers";

function claim(key: string, code: unknown): Promise<Response> {
  return call("/v1/agents/claim", { method: "POST", key, json: { code } });
}

describe("POST /v1/agents/claim", () => {
  it("binds the agent: 200 { ok, owner_human_id, claimed_at }, the code is spent, the key keeps working", async () => {
    const human = await signIn();
    const agent = await register("to-claim");
    const { code } = await mintClaimCode(human);
    const res = await claim(agent.api_key, code);
    expect(res.status).toBe(200);
    const body = await res.json<Record<string, unknown>>();
    expect(Object.keys(body).sort()).toEqual(["claimed_at", "ok", "owner_human_id"]);
    expect(body.ok).toBe(true);
    expect(body.owner_human_id).toBe(human.humanId);
    expect(new Date(body.claimed_at as string).toISOString()).toBe(body.claimed_at);
    expect(Math.abs(Date.parse(body.claimed_at as string) - Date.now())).toBeLessThan(60_000);

    const row = await env.DB.prepare("SELECT owner_human_id, claimed_at FROM agents WHERE id = ?1").bind(agent.agent_id).first();
    expect(row).toEqual({ owner_human_id: human.humanId, claimed_at: body.claimed_at });
    const spent = await env.DB.prepare("SELECT used_by_agent_id FROM claim_codes WHERE used_at IS NOT NULL").all();
    expect(spent.results).toContainEqual({ used_by_agent_id: agent.agent_id });
    expect(await keyStatus(agent.api_key)).toBe(200);

    const mine = await json<{ items: Array<{ id: string; claimed_at: string; registered_via: string }> }>(await call("/v1/self/agents", { session: human.session }), 200);
    expect(mine.items).toContainEqual(expect.objectContaining({ id: agent.agent_id, claimed_at: body.claimed_at, registered_via: "direct" }));
  });

  it("accepts the code with surrounding whitespace", async () => {
    const human = await signIn();
    const agent = await register();
    const { code } = await mintClaimCode(human);
    await json(await claim(agent.api_key, `  ${code}\n`), 200);
  });

  it("a replayed code → 400 claim_code_invalid; the second agent stays unclaimed", async () => {
    const human = await signIn();
    const first = await register();
    const second = await register();
    const { code } = await mintClaimCode(human);
    await json(await claim(first.api_key, code), 200);
    const before = await snapshot();
    const err = await expectError(await claim(second.api_key, code), 400, "claim_code_invalid");
    expect(err.details).toEqual({ field: "code" });
    expect(await snapshot()).toEqual(before);
    const row = await env.DB.prepare("SELECT owner_human_id FROM agents WHERE id = ?1").bind(second.agent_id).first();
    expect(row).toEqual({ owner_human_id: null });
  });

  it("an expired code → 400 claim_code_invalid, and the code stays unused", async () => {
    const human = await signIn();
    const agent = await register();
    const { code } = await mintClaimCode(human);
    await env.DB.prepare("UPDATE claim_codes SET expires_at = ?1 WHERE human_id = ?2").bind(new Date(Date.now() - 1000).toISOString(), human.humanId).run();
    const before = await snapshot();
    await expectError(await claim(agent.api_key, code), 400, "claim_code_invalid");
    expect(await snapshot()).toEqual(before);
  });

  it("unknown codes → 400 claim_code_invalid", async () => {
    const agent = await register();
    const before = await snapshot();
    for (const code of ["cc_00000000000000000000000000000000", "nonsense", "CC_ABC", "x".repeat(200)]) {
      await expectError(await claim(agent.api_key, code), 400, "claim_code_invalid");
    }
    expect(await snapshot()).toEqual(before);
  });

  it("an already-claimed agent → 409 agent_already_claimed; the new code is not spent", async () => {
    const human = await signIn();
    const other = await signIn();
    const agent = await register();
    await json(await claim(agent.api_key, (await mintClaimCode(human)).code), 200);
    const { code } = await mintClaimCode(other);
    const before = await snapshot();
    const err = await expectError(await claim(agent.api_key, code), 409, "agent_already_claimed");
    expect(err.details).toEqual({ owner_human_id: human.humanId });
    expect(await snapshot()).toEqual(before);
    // The other human's code still works for a fresh agent.
    const fresh = await register();
    await json(await claim(fresh.api_key, code), 200);
  });

  it("the same human re-claiming their own agent is also one-way: 409", async () => {
    const human = await signIn();
    const agent = await register();
    await json(await claim(agent.api_key, (await mintClaimCode(human)).code), 200);
    await expectError(await claim(agent.api_key, (await mintClaimCode(human)).code), 409, "agent_already_claimed");
  });

  it("no key → 401 unauthorized; nothing spent", async () => {
    const human = await signIn();
    const { code } = await mintClaimCode(human);
    const before = await snapshot();
    await expectError(await call("/v1/agents/claim", { method: "POST", json: { code } }), 401, "unauthorized");
    expect(await snapshot()).toEqual(before);
  });

  for (const [label, authorization] of [
    ["a bare Bearer", "Bearer"],
    ["an empty Bearer", "Bearer "],
    ["Basic credentials", "Basic dXNlcjpwYXNz"],
    ["a token that is not an agent key", "Bearer sess_0123456789abcdef0123456789abcdef"],
    ["a key with two tokens", "Bearer svc_a svc_b"],
    ["a key without the scheme", "svc_0123456789abcdef0123456789abcdef"],
  ] as const) {
    it(`a malformed bearer (${label}) → 401 unauthorized; nothing spent`, async () => {
      const human = await signIn();
      const { code } = await mintClaimCode(human);
      const before = await snapshot();
      await expectError(await call("/v1/agents/claim", { method: "POST", authorization, json: { code } }), 401, "unauthorized");
      expect(await snapshot()).toEqual(before);
    });
  }

  it("an unknown svc_ key → 401 invalid_api_key (reason unknown); nothing spent", async () => {
    const human = await signIn();
    const { code } = await mintClaimCode(human);
    const before = await snapshot();
    const err = await expectError(await claim("svc_0123456789abcdef0123456789abcdef", code), 401, "invalid_api_key");
    expect(err.details).toEqual({ reason: "unknown" });
    expect(await snapshot()).toEqual(before);
  });

  it("racing agents for one code: exactly one wins, the code binds one agent", async () => {
    const human = await signIn();
    const agents = await Promise.all([register(), register(), register(), register()]);
    const { code } = await mintClaimCode(human);
    const results = await Promise.all(agents.map((a) => claim(a.api_key, code)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 400, 400, 400]);
    for (const r of results) if (r.status === 400) await expectError(r, 400, "claim_code_invalid");
    const owned = await env.DB.prepare(`SELECT count(*) AS n FROM agents WHERE owner_human_id = ?1`).bind(human.humanId).first<{ n: number }>();
    expect(owned!.n).toBe(1);
  });

  it("racing codes for one agent: exactly one binds it, and the losing code stays usable", async () => {
    const first = await signIn();
    const second = await signIn();
    const agent = await register();
    const codes = [(await mintClaimCode(first)).code, (await mintClaimCode(second)).code];
    const results = await Promise.all(codes.map((code) => claim(agent.api_key, code)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    const winner = statuses.indexOf(200);
    const loser = 1 - winner;
    await expectError(results[loser], 409, "agent_already_claimed");
    const row = await env.DB.prepare("SELECT owner_human_id FROM agents WHERE id = ?1").bind(agent.agent_id).first<{ owner_human_id: string }>();
    expect(row!.owner_human_id).toBe([first, second][winner].humanId);
    // The loser's code was not burnt by the race.
    const fresh = await register();
    await json(await claim(fresh.api_key, codes[loser]), 200);
  });

  it("the scheme is case-insensitive", async () => {
    const human = await signIn();
    const agent = await register();
    const { code } = await mintClaimCode(human);
    await json(await call("/v1/agents/claim", { method: "POST", authorization: `bearer ${agent.api_key}`, json: { code } }), 200);
  });

  const badBodies: Array<[string, Parameters<typeof call>[1], string]> = [
    ["no body", {}, "body"],
    ["empty code", { json: { code: "" } }, "code"],
    ["whitespace code", { json: { code: "   " } }, "code"],
    ["code over 200 characters", { json: { code: "c".repeat(201) } }, "code"],
    ["code as a number", { json: { code: 123 } }, "code"],
    ["code as null", { json: { code: null } }, "code"],
    ["an unknown field", { json: { code: "cc_x", human_id: "h1" } }, "human_id"],
    ["malformed JSON", { body: "{", contentType: "application/json" }, "body"],
    ["non-JSON content type", { body: '{"code":"cc_x"}', contentType: "text/plain" }, "content-type"],
  ];
  for (const [label, opts, field] of badBodies) {
    it(`${label} → 400 invalid_request (details.field ${field})`, async () => {
      const agent = await register();
      const before = await snapshot();
      const err = await expectError(await call("/v1/agents/claim", { method: "POST", key: agent.api_key, ...opts }), 400, "invalid_request");
      expect(err.details?.field).toBe(field);
      expect(await snapshot()).toEqual(before);
    });
  }
});
