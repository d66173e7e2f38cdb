// POST /v1/register (WIRE §2.1): the three registration modes, the key format and its
// storage (sha256 only), and every way a body can be wrong, each of which must leave D1
// exactly as it was.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, callWith, count, expectError, json, keyStatus, snapshot, type Registered } from "../helpers";

async function sha256Hex(value: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

describe("POST /v1/register in open mode", () => {
  it("answers 201 with exactly agent_id, api_key and key_prefix", async () => {
    const before = await count("agents");
    const body = await json<Registered>(await call("/v1/register", { method: "POST", json: { name: "scout" } }), 201);
    expect(Object.keys(body).sort()).toEqual(["agent_id", "api_key", "key_prefix"]);
    expect(body.api_key).toMatch(/^svc_[0-9a-f]{32}$/);
    expect(body.key_prefix).toBe(body.api_key.slice(0, 10));
    expect(body.agent_id).toMatch(/^[a-z0-9]+$/);
    expect(await count("agents")).toBe(before + 1);
    const row = await env.DB.prepare("SELECT * FROM agents WHERE id = ?1").bind(body.agent_id).first<Record<string, unknown>>();
    expect(row).toMatchObject({ name: "scout", owner_human_id: null, claimed_at: null, paused_at: null, registered_via: "direct" });
  });

  it("the new key works at once and names the agent", async () => {
    const body = await json<Registered>(await call("/v1/register", { method: "POST", json: { name: "worker-bee" } }), 201);
    const keys = await json<Record<string, unknown>>(await call("/v1/keys", { key: body.api_key }), 200);
    expect(keys).toMatchObject({ agent_id: body.agent_id, name: "worker-bee", key_prefix: body.key_prefix, revoked_at: null });
  });

  it("stores only the sha256 of the key: the raw key appears nowhere in agent_keys", async () => {
    const body = await json<Registered>(await call("/v1/register", { method: "POST", json: { name: "hashed" } }), 201);
    const rows = await env.DB.prepare("SELECT * FROM agent_keys WHERE agent_id = ?1").bind(body.agent_id).all<Record<string, unknown>>();
    expect(rows.results).toHaveLength(1);
    const row = rows.results[0];
    expect(row.key_hash).toBe(await sha256Hex(body.api_key));
    expect(row.key_prefix).toBe(body.api_key.slice(0, 10));
    const secretPart = body.api_key.slice(10);
    const all = await env.DB.prepare("SELECT * FROM agent_keys").all<Record<string, unknown>>();
    for (const r of all.results) {
      for (const value of Object.values(r)) {
        expect(String(value)).not.toContain(body.api_key);
        expect(String(value)).not.toContain(secretPart);
      }
    }
    // Nor in any other identity table.
    for (const table of ["agents", "claim_codes", "device_codes", "sessions", "magic_links", "humans"]) {
      const dump = JSON.stringify((await env.DB.prepare(`SELECT * FROM ${table}`).all()).results);
      expect(dump).not.toContain(secretPart);
    }
  });

  it("accepts no body, an empty object and an omitted name (the agent is nameless)", async () => {
    for (const opts of [{ method: "POST" }, { method: "POST", json: {} }, { method: "POST", body: "", contentType: "application/json" }]) {
      const body = await json<Registered>(await call("/v1/register", opts), 201);
      const keys = await json<Record<string, unknown>>(await call("/v1/keys", { key: body.api_key }), 200);
      expect(keys.name).toBeNull();
    }
  });

  it("trims the name and accepts exactly 64 characters and non-ASCII letters", async () => {
    const long = "n".repeat(64);
    for (const [sent, stored] of [["  padded  ", "padded"], [long, long], ["Ágent ✓ 名前", "Ágent ✓ 名前"]]) {
      const body = await json<Registered>(await call("/v1/register", { method: "POST", json: { name: sent } }), 201);
      const row = await env.DB.prepare("SELECT name FROM agents WHERE id = ?1").bind(body.agent_id).first<{ name: string }>();
      expect(row!.name).toBe(stored);
    }
  });

  it("mints a different key and id every time", async () => {
    const a = await json<Registered>(await call("/v1/register", { method: "POST", json: {} }), 201);
    const b = await json<Registered>(await call("/v1/register", { method: "POST", json: {} }), 201);
    expect(a.api_key).not.toBe(b.api_key);
    expect(a.agent_id).not.toBe(b.agent_id);
  });

  it("ignores a bearer header in open mode (no secret needed, any value passes)", async () => {
    await json(await call("/v1/register", { method: "POST", json: {}, authorization: "Bearer whatever" }), 201);
  });
});

describe("POST /v1/register: invalid bodies change nothing", () => {
  const cases: Array<[string, Parameters<typeof call>[1], string]> = [
    ["empty name", { json: { name: "" } }, "name"],
    ["whitespace-only name", { json: { name: "   " } }, "name"],
    ["name of 65 characters", { json: { name: "x".repeat(65) } }, "name"],
    ["name with a newline", { json: { name: "evil\nname" } }, "name"],
    ["name with a NUL", { json: { name: "nul\u0000byte" } }, "name"],
    ["name with an escape character", { json: { name: "term\u001b[31mred" } }, "name"],
    ["name with DEL", { json: { name: "del\u007f" } }, "name"],
    ["name with a tab inside", { json: { name: "tab\tname" } }, "name"],
    ["name as a number", { json: { name: 42 } }, "name"],
    ["name as null", { json: { name: null } }, "name"],
    ["name as an array", { json: { name: ["a"] } }, "name"],
    ["name as an object", { json: { name: { first: "a" } } }, "name"],
    ["an unknown field", { json: { name: "ok", admin: true } }, "admin"],
    ["an unknown field only", { json: { owner_human_id: "h1" } }, "owner_human_id"],
    ["__proto__ smuggling", { body: '{"name":"ok","__proto__":{"admin":true}}', contentType: "application/json" }, "__proto__"],
    ["a JSON array", { json: [] }, "body"],
    ["a JSON string", { json: "name" }, "body"],
    ["a JSON number", { json: 7 }, "body"],
    ["JSON null", { body: "null", contentType: "application/json" }, "body"],
    ["JSON true", { body: "true", contentType: "application/json" }, "body"],
    ["malformed JSON", { body: '{"name": "oops"', contentType: "application/json" }, "body"],
    ["trailing garbage", { body: '{"name":"a"} x', contentType: "application/json" }, "body"],
    ["single quotes", { body: "{'name':'a'}", contentType: "application/json" }, "body"],
    ["not UTF-8", { body: new Uint8Array([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), contentType: "application/json" }, "body"],
    ["text/plain content type", { body: '{"name":"a"}', contentType: "text/plain" }, "content-type"],
    ["form content type", { body: "name=a", contentType: "application/x-www-form-urlencoded" }, "content-type"],
    ["jsonp lookalike content type", { body: '{"name":"a"}', contentType: "application/jsonp" }, "content-type"],
  ];

  for (const [label, opts, field] of cases) {
    it(`${label} → 400 invalid_request, details.field = ${field}`, async () => {
      const before = await snapshot();
      const err = await expectError(await call("/v1/register", { method: "POST", ...opts }), 400, "invalid_request");
      expect(err.details?.field).toBe(field);
      expect(await snapshot()).toEqual(before);
    });
  }

  it("accepts a structured JSON media type with parameters", async () => {
    await json(await call("/v1/register", { method: "POST", body: '{"name":"a"}', contentType: "application/json; charset=utf-8" }), 201);
    await json(await call("/v1/register", { method: "POST", body: '{"name":"b"}', contentType: "application/vnd.relay+json" }), 201);
  });

  it("a body over MAX_JSON_BODY_BYTES (1 MiB) → 413 payload_too_large with details.limit", async () => {
    const before = await snapshot();
    const big = JSON.stringify({ name: "a", pad: "x".repeat(1_048_576) });
    const err = await expectError(await call("/v1/register", { method: "POST", body: big, contentType: "application/json" }), 413, "payload_too_large");
    expect(err.details).toEqual({ limit: 1_048_576 });
    expect(await snapshot()).toEqual(before);
  });

  it("a streamed body without Content-Length over the cap → 413 as well", async () => {
    const before = await snapshot();
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode('{"name":"'));
        if (sent > 1_200_000) {
          controller.enqueue(new TextEncoder().encode('"}'));
          controller.close();
          return;
        }
        controller.enqueue(chunk);
        sent += chunk.byteLength;
      },
    });
    const res = await call("/v1/register", { method: "POST", body: stream, contentType: "application/json" });
    const err = await expectError(res, 413, "payload_too_large");
    expect(err.details).toEqual({ limit: 1_048_576 });
    expect(await snapshot()).toEqual(before);
  });

  it("a body of exactly the cap is read (and then judged on its content)", async () => {
    const prefix = '{"name":"a","pad":"';
    const body = prefix + "x".repeat(1_048_576 - prefix.length - 2) + '"}';
    expect(new TextEncoder().encode(body).byteLength).toBe(1_048_576);
    const err = await expectError(await call("/v1/register", { method: "POST", body, contentType: "application/json" }), 400, "invalid_request");
    expect(err.details?.field).toBe("pad");
  });

  it("deeply nested JSON is refused cleanly, never a 500", async () => {
    const before = await snapshot();
    const depth = 200_000;
    const nested = "[".repeat(depth) + "]".repeat(depth);
    for (const body of [nested, `{"name":${nested}}`, `{"extra":${nested}}`]) {
      const res = await call("/v1/register", { method: "POST", body, contentType: "application/json" });
      await expectError(res, 400, "invalid_request");
    }
    expect(await snapshot()).toEqual(before);
  });
});

describe("POST /v1/register in closed mode", () => {
  it("answers 404 not_found and creates nothing", async () => {
    const before = await snapshot();
    const res = await callWith({ REGISTRATION_MODE: "closed" }, "/v1/register", { method: "POST", json: { name: "nope" } });
    const err = await expectError(res, 404, "not_found");
    expect(err.message).toContain("/v1/device/code");
    expect(await snapshot()).toEqual(before);
  });

  it("is the production default: no REGISTRATION_MODE and no development mode → 404", async () => {
    const before = await snapshot();
    const res = await callWith({ REGISTRATION_MODE: undefined, RELAY_ENV: "production" }, "/v1/register", { method: "POST", json: {} });
    await expectError(res, 404, "not_found");
    expect(await snapshot()).toEqual(before);
  });

  it("an unknown mode falls back to the default (open in development)", async () => {
    await json(await callWith({ REGISTRATION_MODE: "bogus" }, "/v1/register", { method: "POST", json: {} }), 201);
  });

  it("does not gate the device flow", async () => {
    const res = await callWith({ REGISTRATION_MODE: "closed" }, "/v1/device/code", { method: "POST", json: { name: "cli-box" } });
    expect(res.status).toBe(200);
  });
});

describe("POST /v1/register in secret mode", () => {
  const secretEnv = { REGISTRATION_MODE: "secret", REGISTRATION_SECRET: "s3cret-registration-value" };

  for (const [label, authorization] of [
    ["without a secret", undefined],
    ["with a wrong secret", "Bearer not-the-secret"],
    ["with a prefix of the secret", "Bearer s3cret"],
    ["with the secret plus a suffix", "Bearer s3cret-registration-value-and-more"],
    ["with an empty bearer", "Bearer "],
    ["with the secret in another scheme", "Basic s3cret-registration-value"],
  ] as const) {
    it(`${label} → 401 unauthorized, nothing created`, async () => {
      const before = await snapshot();
      const res = await callWith(secretEnv, "/v1/register", { method: "POST", json: { name: "x" }, ...(authorization ? { authorization } : {}) });
      await expectError(res, 401, "unauthorized");
      expect(await snapshot()).toEqual(before);
    });
  }

  it("with Authorization: Bearer <secret> → 201 and a working, unclaimed agent", async () => {
    const res = await callWith(secretEnv, "/v1/register", { method: "POST", json: { name: "vip" }, authorization: "Bearer s3cret-registration-value" });
    const body = await json<Registered>(res, 201);
    expect(body.api_key).toMatch(/^svc_[0-9a-f]{32}$/);
    expect(await keyStatus(body.api_key)).toBe(200);
    const row = await env.DB.prepare("SELECT owner_human_id FROM agents WHERE id = ?1").bind(body.agent_id).first();
    expect(row).toEqual({ owner_human_id: null });
  });

  it("secret mode without a configured secret refuses everyone", async () => {
    const before = await snapshot();
    const res = await callWith({ REGISTRATION_MODE: "secret", REGISTRATION_SECRET: "" }, "/v1/register", { method: "POST", json: {}, authorization: "Bearer " });
    await expectError(res, 401, "unauthorized");
    expect(await snapshot()).toEqual(before);
  });

  it("a request without the secret is refused before its body is looked at", async () => {
    const before = await snapshot();
    const res = await callWith(secretEnv, "/v1/register", { method: "POST", body: "{not json", contentType: "application/json" });
    await expectError(res, 401, "unauthorized");
    expect(await snapshot()).toEqual(before);
  });
});
