// The RFC 8628 device flow (WIRE §2.1, §6.4): the exact 200 shapes, the string-form
// errors while pending, too fast, denied or expired, and the key handed out exactly once
// to an agent that already belongs to the approving human.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { decideDeviceCode } from "../../../src/db/codes";
import { call, count, expectError, expectRfcError, freshIp, json, keyStatus, signIn, snapshot } from "../helpers";

interface CodeResponse {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

async function startFlow(name = "cli-laptop", ip = freshIp()): Promise<CodeResponse> {
  return json<CodeResponse>(await call("/v1/device/code", { method: "POST", json: { name }, ip }), 200);
}

function poll(deviceCode: string, ip = freshIp()): Promise<Response> {
  return call("/v1/device/token", { method: "POST", json: { device_code: deviceCode }, ip });
}

async function sha256Hex(value: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Moves the last poll back so the next poll is not "too fast". */
async function forgetLastPoll(deviceCode: string): Promise<void> {
  await env.DB.prepare("UPDATE device_codes SET last_polled_at = NULL WHERE device_code_hash = ?1").bind(await sha256Hex(deviceCode)).run();
}

describe("POST /v1/device/code", () => {
  it("answers exactly 200 with the six RFC fields", async () => {
    const res = await call("/v1/device/code", { method: "POST", json: { name: "cli-host" } });
    expect(res.status).toBe(200);
    const body = await res.json<CodeResponse>();
    expect(Object.keys(body).sort()).toEqual(["device_code", "expires_in", "interval", "user_code", "verification_uri", "verification_uri_complete"]);
    expect(body.device_code).toMatch(/^dc_[0-9a-f]{32}$/);
    expect(body.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(body.verification_uri).toBe("http://localhost:8787/device");
    expect(body.verification_uri_complete).toBe(`http://localhost:8787/device?code=${body.user_code}`);
    expect(body.expires_in).toBe(900);
    expect(body.interval).toBe(5);
  });

  it("stores only the device code's hash, pending, expiring in 15 minutes", async () => {
    const flow = await startFlow("stored");
    const row = await env.DB.prepare("SELECT * FROM device_codes WHERE user_code = ?1").bind(flow.user_code).first<Record<string, unknown>>();
    expect(row).toMatchObject({ device_code_hash: await sha256Hex(flow.device_code), name: "stored", status: "pending", human_id: null, agent_id: null, interval_seconds: 5 });
    const ttl = Date.parse(row!.expires_at as string) - Date.parse(row!.created_at as string);
    expect(ttl).toBe(900_000);
    expect(JSON.stringify(row)).not.toContain(flow.device_code.slice(3));
  });

  it("user codes differ between flows", async () => {
    const a = await startFlow();
    const b = await startFlow();
    expect(a.user_code).not.toBe(b.user_code);
    expect(a.device_code).not.toBe(b.device_code);
  });

  const bad: Array<[string, unknown, string]> = [
    ["no name", {}, "name"],
    ["empty name", { name: "" }, "name"],
    ["name over 64 characters", { name: "y".repeat(65) }, "name"],
    ["name with control characters", { name: "cli-\u0007bell" }, "name"],
    ["name with a carriage return", { name: "cli\rhost" }, "name"],
    ["name of the wrong type", { name: 12 }, "name"],
    ["an unknown field", { name: "ok", scope: "admin" }, "scope"],
  ];
  for (const [label, body, field] of bad) {
    it(`${label} → 400 invalid_request (details.field ${field}), no code stored`, async () => {
      const before = await snapshot();
      const err = await expectError(await call("/v1/device/code", { method: "POST", json: body }), 400, "invalid_request");
      expect(err.details?.field).toBe(field);
      expect(await snapshot()).toEqual(before);
    });
  }

  it("no body → 400 invalid_request", async () => {
    const before = await snapshot();
    const err = await expectError(await call("/v1/device/code", { method: "POST" }), 400, "invalid_request");
    expect(err.details?.field).toBe("body");
    expect(await snapshot()).toEqual(before);
  });
});

describe("POST /v1/device/token", () => {
  it("pending → 400 { error: 'authorization_pending' } in the RFC string form", async () => {
    const flow = await startFlow();
    await expectRfcError(await poll(flow.device_code), "authorization_pending");
  });

  it("polling faster than the interval → slow_down, and the interval grows by 5 s", async () => {
    const flow = await startFlow();
    const ip = freshIp();
    await expectRfcError(await poll(flow.device_code, ip), "authorization_pending");
    await expectRfcError(await poll(flow.device_code, ip), "slow_down");
    const row = await env.DB.prepare("SELECT interval_seconds FROM device_codes WHERE user_code = ?1").bind(flow.user_code).first<{ interval_seconds: number }>();
    expect(row!.interval_seconds).toBe(10);
    await expectRfcError(await poll(flow.device_code, ip), "slow_down");
    const again = await env.DB.prepare("SELECT interval_seconds FROM device_codes WHERE user_code = ?1").bind(flow.user_code).first<{ interval_seconds: number }>();
    expect(again!.interval_seconds).toBe(15);
    // After a pause long enough (simulated), the poll is pending again.
    await forgetLastPoll(flow.device_code);
    await expectRfcError(await poll(flow.device_code, ip), "authorization_pending");
  });

  it("approved → exactly 200 { agent_id, agent_key, name } once; the next poll → device_code_invalid", async () => {
    const human = await signIn();
    const flow = await startFlow("approved-cli");
    await expectRfcError(await poll(flow.device_code), "authorization_pending");
    expect(await decideDeviceCode(env, flow.user_code, human.humanId, true)).toBe(true);
    // Approval alone creates nothing.
    expect(await count("agents", "owner_human_id = ?1", human.humanId)).toBe(0);
    await forgetLastPoll(flow.device_code);

    const res = await poll(flow.device_code);
    expect(res.status).toBe(200);
    const body = await res.json<{ agent_id: string; agent_key: string; name: string }>();
    expect(Object.keys(body).sort()).toEqual(["agent_id", "agent_key", "name"]);
    expect(body.agent_key).toMatch(/^svc_[0-9a-f]{32}$/);
    expect(body.name).toBe("approved-cli");
    expect(await keyStatus(body.agent_key)).toBe(200);

    // Owned by the approver at birth, registered via the device flow.
    const agent = await env.DB.prepare("SELECT * FROM agents WHERE id = ?1").bind(body.agent_id).first<Record<string, unknown>>();
    expect(agent).toMatchObject({ name: "approved-cli", owner_human_id: human.humanId, registered_via: "device", paused_at: null });
    expect(agent!.claimed_at).toEqual(expect.any(String));
    const code = await env.DB.prepare("SELECT status, agent_id FROM device_codes WHERE user_code = ?1").bind(flow.user_code).first();
    expect(code).toEqual({ status: "consumed", agent_id: body.agent_id });
    const mine = await json<{ items: Array<{ id: string; registered_via: string }> }>(await call("/v1/self/agents", { session: human.session }), 200);
    expect(mine.items.map((a) => a.id)).toContain(body.agent_id);

    // The key is stored only as its hash.
    const keyRow = await env.DB.prepare("SELECT key_hash FROM agent_keys WHERE agent_id = ?1").bind(body.agent_id).first<{ key_hash: string }>();
    expect(keyRow!.key_hash).toBe(await sha256Hex(body.agent_key));

    // Second exchange: the envelope, and no second agent.
    const before = await snapshot();
    await forgetLastPoll(flow.device_code);
    const err = await expectError(await poll(flow.device_code), 400, "device_code_invalid");
    expect(err.details).toEqual({ field: "device_code" });
    expect(await snapshot()).toEqual(before);
  });

  it("racing polls after approval: exactly one gets the key, one agent is created", async () => {
    const human = await signIn();
    const flow = await startFlow("raced");
    await decideDeviceCode(env, flow.user_code, human.humanId, true);
    const agentsBefore = await count("agents");
    const results = await Promise.all(Array.from({ length: 5 }, () => poll(flow.device_code)));
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    for (const r of results) if (r.status !== 200) await expectError(r, 400, "device_code_invalid");
    expect(await count("agents")).toBe(agentsBefore + 1);
  });

  it("an approval is honoured even on a too-fast poll (the key is never withheld)", async () => {
    const human = await signIn();
    const flow = await startFlow();
    const ip = freshIp();
    await expectRfcError(await poll(flow.device_code, ip), "authorization_pending");
    await decideDeviceCode(env, flow.user_code, human.humanId, true);
    expect((await poll(flow.device_code, ip)).status).toBe(200);
  });

  it("the device-flow agent is already claimed: redeeming a claim code → 409 agent_already_claimed", async () => {
    const human = await signIn();
    const other = await signIn();
    const flow = await startFlow("owned-at-birth");
    await decideDeviceCode(env, flow.user_code, human.humanId, true);
    const { agent_key } = await json<{ agent_key: string }>(await poll(flow.device_code), 200);
    const minted = await json<{ code: string }>(await call("/v1/self/claim-codes", { method: "POST", session: other.session }), 201);
    const before = await snapshot();
    const err = await expectError(await call("/v1/agents/claim", { method: "POST", key: agent_key, json: { code: minted.code } }), 409, "agent_already_claimed");
    expect(err.details).toEqual({ owner_human_id: human.humanId });
    expect(await snapshot()).toEqual(before);
  });

  it("denied → access_denied, and stays denied; nothing is created", async () => {
    const human = await signIn();
    const flow = await startFlow();
    expect(await decideDeviceCode(env, flow.user_code, human.humanId, false)).toBe(true);
    const before = await snapshot();
    await expectRfcError(await poll(flow.device_code), "access_denied");
    await forgetLastPoll(flow.device_code);
    await expectRfcError(await poll(flow.device_code), "access_denied");
    expect(await snapshot()).toEqual(before);
    // A denied code cannot be approved afterwards.
    expect(await decideDeviceCode(env, flow.user_code, human.humanId, true)).toBe(false);
    await expectRfcError(await poll(flow.device_code), "access_denied");
  });

  it("expired → expired_token, pending or approved alike; an expired code cannot be approved", async () => {
    const human = await signIn();
    const past = new Date(Date.now() - 1000).toISOString();

    const pending = await startFlow();
    await env.DB.prepare("UPDATE device_codes SET expires_at = ?1 WHERE user_code = ?2").bind(past, pending.user_code).run();
    await expectRfcError(await poll(pending.device_code), "expired_token");
    expect(await decideDeviceCode(env, pending.user_code, human.humanId, true)).toBe(false);

    const approved = await startFlow();
    await decideDeviceCode(env, approved.user_code, human.humanId, true);
    await env.DB.prepare("UPDATE device_codes SET expires_at = ?1 WHERE user_code = ?2").bind(past, approved.user_code).run();
    const before = await snapshot();
    await expectRfcError(await poll(approved.device_code), "expired_token");
    expect(await snapshot()).toEqual(before);
  });

  it("approval accepts the user code typed loosely (lowercase, no dash, spaces)", async () => {
    const human = await signIn();
    const flow = await startFlow();
    const loose = ` ${flow.user_code.toLowerCase().replace("-", " ")} `;
    expect(await decideDeviceCode(env, loose, human.humanId, true)).toBe(true);
    expect((await poll(flow.device_code)).status).toBe(200);
  });

  it("an unknown device code → 400 device_code_invalid envelope", async () => {
    const before = await snapshot();
    for (const code of ["dc_00000000000000000000000000000000", "not-a-code", "x".repeat(200)]) {
      const err = await expectError(await poll(code), 400, "device_code_invalid");
      expect(err.details).toEqual({ field: "device_code" });
    }
    expect(await snapshot()).toEqual(before);
  });

  it("the user code is not a device code", async () => {
    const flow = await startFlow();
    await expectError(await poll(flow.user_code), 400, "device_code_invalid");
  });

  const badBodies: Array<[string, Parameters<typeof call>[1], string]> = [
    ["no body", {}, "body"],
    ["empty device_code", { json: { device_code: "" } }, "device_code"],
    ["device_code over 200 characters", { json: { device_code: "d".repeat(201) } }, "device_code"],
    ["device_code of the wrong type", { json: { device_code: 5 } }, "device_code"],
    ["an unknown field", { json: { device_code: "dc_x", client_id: "cli" } }, "client_id"],
    ["malformed JSON", { body: "{device_code:1}", contentType: "application/json" }, "body"],
  ];
  for (const [label, opts, field] of badBodies) {
    it(`${label} → 400 invalid_request (details.field ${field})`, async () => {
      const before = await snapshot();
      const err = await expectError(await call("/v1/device/token", { method: "POST", ...opts }), 400, "invalid_request");
      expect(err.details?.field).toBe(field);
      expect(await snapshot()).toEqual(before);
    });
  }
});
