// Cross-cutting HTTP behaviour: the CLI version gate (426), unknown paths (404), wrong
// verbs (405 + Allow), the errors page, the OpenAPI document, and a sweep of hostile
// inputs across every identity route, none of which may produce a 500.
import { describe, expect, it } from "vitest";
import { Validator } from "@cfworker/json-schema";
import "../../../workers/relay"; // builds the app, so the route registry is populated here too
import { registeredRoutes } from "../../../src/http/routes";
import { catalogue } from "../../../src/errors";
import { API, call, callWith, expectError, json, mintClaimCode, register, signIn, snapshot } from "../helpers";

describe("CLI version gate (426)", () => {
  it("x-service-cli-version below MIN_CLI_VERSION → 426 cli_upgrade_required with min_version and your_version", async () => {
    const before = await snapshot();
    const err = await expectError(await call("/v1/register", { method: "POST", json: {}, cliVersion: "0.0.1" }), 426, "cli_upgrade_required");
    expect(err.details).toEqual({ min_version: "0.1.0", your_version: "0.0.1" });
    expect(await snapshot()).toEqual(before);
  });

  it("applies to every /v1 route, before authentication and the body", async () => {
    const agent = await register();
    for (const [path, opts] of [
      ["/v1/keys", { key: agent.api_key }],
      ["/v1/keys", {}],
      ["/v1/device/code", { method: "POST", json: { name: "x" } }],
      ["/v1/device/token", { method: "POST", body: "{", contentType: "application/json" }],
      ["/v1/agents/claim", { method: "POST", key: agent.api_key, json: { code: "cc_x" } }],
      ["/v1/auth/status", {}],
      ["/v1/openapi.json", {}],
      ["/v1/no-such-route", {}],
    ] as const) {
      const err = await expectError(await call(path, { ...opts, cliVersion: "0.0.9" }), 426, "cli_upgrade_required");
      expect(err.details).toEqual({ min_version: "0.1.0", your_version: "0.0.9" });
    }
  });

  it("no header, the minimum itself and newer versions pass", async () => {
    await json(await call("/v1/register", { method: "POST", json: {} }), 201);
    for (const v of ["0.1.0", "v0.1.0", "0.1.1", "0.10.0", "1.0.0", "0.1.0-beta.1"]) {
      await json(await call("/v1/register", { method: "POST", json: {}, cliVersion: v }), 201);
    }
  });

  it("an unparseable version counts as too old", async () => {
    const err = await expectError(await call("/v1/auth/status", { cliVersion: "banana" }), 426, "cli_upgrade_required");
    expect(err.details).toEqual({ min_version: "0.1.0", your_version: "banana" });
  });

  it("the skill routes are exempt", async () => {
    const doc = await call("/skills/service/SKILL.md", { cliVersion: "0.0.1" });
    expect(doc.status).toBe(200);
    expect(doc.headers.get("content-type")).toMatch(/^text\/markdown/);
    expect((await doc.text()).length).toBeGreaterThan(0);
    const version = await json<{ version: string }>(await call("/skills/service/SKILL.md/version", { cliVersion: "0.0.1" }), 200);
    expect(Object.keys(version)).toEqual(["version"]);
    expect(typeof version.version).toBe("string");
  });

  it("no minimum configured → nothing is gated", async () => {
    await json(await callWith({ MIN_CLI_VERSION: "" }, "/v1/auth/status", { cliVersion: "0.0.1" }), 200);
  });

  it("a raised minimum gates the current CLI", async () => {
    const err = await expectError(await callWith({ MIN_CLI_VERSION: "2.0.0" }, "/v1/auth/status", { cliVersion: "1.9.9" }), 426, "cli_upgrade_required");
    expect(err.details).toEqual({ min_version: "2.0.0", your_version: "1.9.9" });
  });
});

describe("unknown paths and wrong verbs", () => {
  it("unknown paths → 404 not_found envelope", async () => {
    for (const path of ["/nope", "/v1/nope", "/v1/keys/a/b", "/v1/self/agents/x/explode", "/v2/register", "/v1/keys/", "/v1/register/"]) {
      const err = await expectError(await call(path), 404, "not_found");
      expect(err.details).toEqual({ path });
    }
    await expectError(await call("/v1/nope", { method: "POST", json: {} }), 404, "not_found");
  });

  const wrongVerbs: Array<[string, string, string]> = [
    ["GET", "/v1/register", "POST"],
    ["PUT", "/v1/register", "POST"],
    ["GET", "/v1/device/code", "POST"],
    ["GET", "/v1/device/token", "POST"],
    ["GET", "/v1/agents/claim", "POST"],
    ["PUT", "/v1/keys", "GET, POST, HEAD"],
    ["DELETE", "/v1/keys", "GET, POST, HEAD"],
    ["GET", "/v1/keys/abc", "DELETE"],
    ["DELETE", "/v1/auth/status", "GET, HEAD"],
    ["GET", "/v1/auth/logout", "POST"],
    ["GET", "/v1/self/claim-codes", "POST"],
    ["POST", "/v1/self/agents", "GET, HEAD"],
    ["DELETE", "/v1/self/agents/abc", "PATCH"],
    ["GET", "/v1/self/agents/abc/pause", "POST"],
    ["PUT", "/v1/self/profile", "GET, HEAD, PATCH"],
    ["POST", "/v1/openapi.json", "GET, HEAD"],
    ["POST", "/skills/service/SKILL.md", "GET, HEAD"],
    ["POST", "/docs/errors", "GET, HEAD"],
  ];
  for (const [method, path, allow] of wrongVerbs) {
    it(`${method} ${path} → 405 method_not_allowed, Allow: ${allow}`, async () => {
      const before = await snapshot();
      const res = await call(path, { method });
      const err = await expectError(res, 405, "method_not_allowed");
      const got = res.headers.get("allow")!.split(", ").sort();
      expect(got).toEqual(allow.split(", ").sort());
      expect(err.details).toEqual({ method, allow: expect.arrayContaining(allow.split(", ")) });
      expect(await snapshot()).toEqual(before);
    });
  }

  it("HEAD on a GET route answers like GET without a body", async () => {
    const res = await call("/v1/auth/status", { method: "HEAD" });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("");
  });
});

describe("GET /docs/errors", () => {
  it("lists every catalogue code with an anchor id, status and retryable flag", async () => {
    const res = await call("/docs/errors");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await res.text();
    for (const [code, entry] of Object.entries(catalogue)) {
      const row = new RegExp(`<tr id="${code}">.*?</tr>`).exec(html);
      expect(row, code).not.toBeNull();
      expect(row![0]).toContain(`href="#${code}"`);
      expect(row![0]).toContain(`<td>${entry.status}</td>`);
      expect(row![0]).toContain(`<td>${entry.retryable ? "yes" : "no"}</td>`);
    }
    const ids = [...html.matchAll(/<tr id="([a-z_]+)">/g)].map((m) => m[1]);
    expect(ids.sort()).toEqual(Object.keys(catalogue).sort());
  });

  it("every docs_url an error carries points at an anchor on that page", async () => {
    const err = await expectError(await call("/v1/keys"), 401, "unauthorized");
    const url = new URL(err.docs_url);
    expect(url.origin + url.pathname).toBe(`${API}/docs/errors`);
    const html = await (await call(url.pathname)).text();
    expect(html).toContain(`id="${url.hash.slice(1)}"`);
  });
});

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function resolvePointer(doc: Json, ref: string): Json | undefined {
  if (!ref.startsWith("#")) return undefined;
  let node: Json | undefined = doc;
  for (const raw of ref.slice(1).split("/").slice(1)) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (node === null || typeof node !== "object" || !(key in node)) return undefined;
    node = (node as Record<string, Json>)[key];
  }
  return node;
}

function collectRefs(node: Json, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const x of node) collectRefs(x, out);
  else if (node && typeof node === "object") {
    for (const [k, v] of Object.entries(node)) {
      if (k === "$ref" && typeof v === "string") out.push(v);
      else collectRefs(v, out);
    }
  }
  return out;
}

describe("GET /v1/openapi.json", () => {
  it("is a structurally valid OpenAPI 3.1 document", async () => {
    const res = await call("/v1/openapi.json");
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const doc = await json<Record<string, any>>(res, 200);
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(typeof doc.info.title).toBe("string");
    expect(typeof doc.info.version).toBe("string");
    expect(doc.servers).toEqual([{ url: API }]);
    const schemes = doc.components.securitySchemes as Record<string, unknown>;

    const operationIds = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      expect(path.startsWith("/")).toBe(true);
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      for (const [method, op] of Object.entries(item)) {
        expect(["get", "put", "post", "delete", "options", "head", "patch", "trace"]).toContain(method);
        expect(typeof op.summary).toBe("string");
        expect(typeof op.operationId).toBe("string");
        expect(operationIds.has(op.operationId)).toBe(false);
        operationIds.add(op.operationId);
        for (const requirement of op.security ?? []) for (const name of Object.keys(requirement)) expect(Object.keys(schemes)).toContain(name);
        const params = (op.parameters ?? []) as Array<{ name: string; in: string; required?: boolean; schema: unknown }>;
        for (const p of params) {
          expect(["path", "query", "header", "cookie"]).toContain(p.in);
          if (p.in === "path") expect(p.required).toBe(true);
          expect(p.schema).toBeTypeOf("object");
        }
        expect(params.filter((p) => p.in === "path").map((p) => p.name).sort()).toEqual([...templated].sort());
        if (op.requestBody) {
          expect(typeof op.requestBody.required).toBe("boolean");
          expect(Object.keys(op.requestBody.content).length).toBeGreaterThan(0);
          for (const media of Object.values(op.requestBody.content as Record<string, { schema: object }>)) {
            expect(() => new Validator(media.schema as never, "2020-12")).not.toThrow();
          }
        }
        expect(Object.keys(op.responses).length).toBeGreaterThan(0);
        for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
          expect(status).toMatch(/^([1-5]\d\d|[1-5]XX|default)$/);
          expect(typeof response.description).toBe("string");
          for (const media of Object.values((response.content ?? {}) as Record<string, { schema: object }>)) {
            expect(media.schema).toBeTypeOf("object");
            expect(JSON.stringify(media.schema)).not.toContain('"$schema"');
          }
        }
      }
    }
    // Every $ref resolves from the document's root (OpenAPI 3.1 resolves against the document).
    for (const ref of collectRefs(doc as Json)) expect(resolvePointer(doc as Json, ref), ref).toBeDefined();
    // The error schema enumerates exactly the catalogue.
    expect(doc.components.schemas.Error.properties.error.properties.code.enum.sort()).toEqual(Object.keys(catalogue).sort());
  });

  it("lists every route registered with defineRoute, and nothing else", async () => {
    const doc = await json<{ paths: Record<string, Record<string, unknown>> }>(await call("/v1/openapi.json"), 200);
    const documented = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`)).sort();
    const registered = registeredRoutes().filter((r) => !r.spec.hidden)
      .map((r) => `${r.spec.method.toUpperCase()} ${r.spec.path.replace(/:([A-Za-z_]+)/g, "{$1}")}`).sort();
    expect(registered.length).toBeGreaterThan(0);
    expect(documented).toEqual([...new Set(registered)]);
    for (const identity of ["POST /v1/register", "POST /v1/device/code", "POST /v1/device/token", "POST /v1/agents/claim", "GET /v1/keys", "POST /v1/keys", "DELETE /v1/keys/{id}",
      "POST /v1/auth/request-link", "GET /v1/auth/verify", "GET /v1/auth/status", "POST /v1/auth/logout", "POST /v1/self/claim-codes", "GET /v1/self/agents",
      "PATCH /v1/self/agents/{id}", "POST /v1/self/agents/{id}/pause", "POST /v1/self/agents/{id}/resume", "POST /v1/self/agents/{id}/revoke-key",
      "POST /v1/self/agents/{id}/rotate-key", "GET /v1/self/profile", "PATCH /v1/self/profile", "GET /v1/openapi.json"]) {
      expect(documented).toContain(identity);
    }
  });

  it("request schemas refuse unknown fields, as the relay does", async () => {
    const doc = await json<{ paths: Record<string, Record<string, any>> }>(await call("/v1/openapi.json"), 200);
    const register = doc.paths["/v1/register"].post.requestBody.content["application/json"].schema;
    expect(register.additionalProperties).toBe(false);
    const v = new Validator(register, "2020-12");
    expect(v.validate({ name: "ok" }).valid).toBe(true);
    expect(v.validate({ name: "ok", extra: 1 }).valid).toBe(false);
    expect(v.validate({ name: "x".repeat(65) }).valid).toBe(false);
  });
});

describe("hostile input never produces a 500", { timeout: 30_000 }, () => {
  const payloads: Array<[string, BodyInit, string]> = [
    ["empty", "", "application/json"],
    ["whitespace", "   \n\t ", "application/json"],
    ["null", "null", "application/json"],
    ["array", "[1,2,3]", "application/json"],
    ["number", "1e400", "application/json"],
    ["string", '"x"', "application/json"],
    ["truncated", '{"a":', "application/json"],
    ["BOM-prefixed", "\ufeff{}", "application/json"],
    ["lone surrogate", '{"name":"\\ud800","email":"\\udfff@x.com","code":"\\ud800","device_code":"\\ud800"}', "application/json"],
    ["NUL bytes", '{"name":"a\\u0000","email":"a\\u0000@x.com","code":"cc_\\u0000","device_code":"dc_\\u0000"}', "application/json"],
    ["huge number", '{"name":1e308,"code":-0,"device_code":1e-400}', "application/json"],
    ["prototype keys", '{"__proto__":{"x":1},"constructor":{"prototype":{"y":1}}}', "application/json"],
    ["duplicate keys", '{"name":"a","name":"b","email":"a@x.com","email":"b@x.com"}', "application/json"],
    ["deep nesting", `{"name":${"[".repeat(50_000)}${"]".repeat(50_000)}}`, "application/json"],
    ["wide object", JSON.stringify(Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, i]))), "application/json"],
    ["invalid UTF-8", new Uint8Array([0x7b, 0xc3, 0x28, 0x7d]), "application/json"],
    ["XML", "<x/>", "application/xml"],
    ["no content type", '{"name":"a"}', ""],
    ["bogus content type", '{"name":"a"}', ";;;==="],
  ];
  const routes: Array<[string, string, "agent" | "human" | "none"]> = [
    ["POST", "/v1/register", "none"],
    ["POST", "/v1/device/code", "none"],
    ["POST", "/v1/device/token", "none"],
    ["POST", "/v1/agents/claim", "agent"],
    ["POST", "/v1/keys", "agent"],
    ["POST", "/v1/auth/request-link", "none"],
    ["POST", "/v1/auth/logout", "human"],
    ["POST", "/v1/self/claim-codes", "human"],
    ["PATCH", "/v1/self/profile", "human"],
  ];

  it("on every identity route with a body", async () => {
    const agent = await register();
    const human = await signIn();
    const humanAgent = await register();
    const { code } = await mintClaimCode(human);
    await json(await call("/v1/agents/claim", { method: "POST", key: humanAgent.api_key, json: { code } }), 200);
    const all = [...routes, ["PATCH", `/v1/self/agents/${humanAgent.agent_id}`, "human"] as [string, string, "human"]];
    for (const [method, path, auth] of all) {
      for (const [label, body, contentType] of payloads) {
        const res = await call(path, {
          method, body,
          ...(contentType ? { contentType } : {}),
          ...(auth === "agent" ? { key: agent.api_key } : {}),
          ...(auth === "human" && path !== "/v1/auth/logout" ? { session: human.session } : {}),
        });
        const text = await res.text();
        expect(res.status, `${method} ${path} with ${label}: ${text.slice(0, 300)}`).toBeLessThan(500);
        if (res.status >= 400) {
          const parsed = JSON.parse(text) as { error: unknown };
          expect(parsed.error, `${method} ${path} with ${label}`).toBeDefined();
        }
      }
    }
  });

  it("hostile headers, paths and query strings", async () => {
    const agent = await register();
    const human = await signIn();
    const probes: Array<[string, Parameters<typeof call>[1]]> = [
      ["/v1/keys", { authorization: "Bearer " + "svc_" + "a".repeat(10_000) }],
      ["/v1/keys", { authorization: "Bearer svc_\u00ff\u00fe" }],
      ["/v1/keys", { authorization: "Bearer svc_%00" }],
      ["/v1/keys", { authorization: "Bearer\tsvc_0123456789abcdef0123456789abcdef" }],
      ["/v1/keys", { authorization: "bEaReR    " + agent.api_key + "   " }],
      ["/v1/self/profile", { headers: { cookie: "relay_session=" + "x".repeat(4000) } }],
      ["/v1/self/profile", { headers: { cookie: "relay_session=%E0%A4%A; other=1" } }],
      ["/v1/self/profile", { headers: { cookie: "relay_session=\"quoted\"" } }],
      ["/v1/self/profile", { headers: { cookie: `relay_session=; relay_session=${human.session}` } }],
      ["/v1/self/agents/%2e%2e%2fkeys/pause", { method: "POST", session: human.session }],
      ["/v1/self/agents/%00/pause", { method: "POST", session: human.session }],
      [`/v1/self/agents/${"a".repeat(5000)}`, { method: "PATCH", session: human.session, json: { name: "x" } }],
      ["/v1/keys/%ZZ", { method: "DELETE", key: agent.api_key }],
      ["/v1/auth/verify?token=%ZZ", {}],
      ["/v1/auth/verify?token=a&token=b", {}],
      ["/v1/auth/verify?token[]=x", {}],
      ["/__dev/mail?to=%ZZ", {}],
      ["/__dev/mail?to=" + "a".repeat(5000), {}],
      ["/v1/auth/request-link", { method: "POST", json: { email: "a@x.com" }, origin: "\u0000" }],
      ["/v1/self/claim-codes", { method: "POST", session: human.session, origin: "http://[::1" }],
      ["/v1/self/claim-codes", { method: "POST", session: human.session, origin: null, referer: "::::" }],
      ["/v1/register", { method: "POST", json: {}, cliVersion: "9".repeat(400) + ".0.0" }],
      ["/v1/register", { method: "POST", json: {}, cliVersion: "" }],
      ["/v1/register", { method: "POST", json: {}, headers: { "content-length": "-1" } }],
    ];
    for (const [path, opts] of probes) {
      let res: Response;
      try {
        res = await call(path, opts);
      } catch {
        continue; // the request itself could not be built (an invalid header value): nothing reached the relay
      }
      const text = await res.text();
      expect(res.status, `${path}: ${text.slice(0, 300)}`).toBeLessThan(500);
    }
  });
});
