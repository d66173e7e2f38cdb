// The connections routes of WIRE §2.6 through the real Worker: create (static active at
// once, oauth2 pending_auth), list oldest first, delete (idempotent); the Connection shape
// exactly, with a fingerprint and never a secret — not in any answer, and not in D1 in the
// clear; every bad field its catalogue code (connection_invalid naming the field, conflict
// for a taken name, connection_limit_reached at the cap) with nothing stored; the owner
// scope (another owner's app is app_not_found); production without CONNECTIONS_KEY.
import { describe, expect, it } from "vitest";
import { call, callWith, expectError, json, signIn } from "../helpers";
import { owner } from "../serve/helpers";
import { CLIENT_SECRET, HEADER_SECRET, oauthBody, setup, sha256Prefix, staticBody, storedRows, type ConnectionBody } from "./fixtures";

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const KEYS = ["id", "name", "kind", "provider", "label", "allowedHost", "headerName", "status", "authScheme", "instanceBaseUrl", "scopes", "expiresAt", "secretFingerprint", "createdAt"];

describe("POST /v1/apps/:id/connections", () => {
  it("creates a static connection, active at once, in the Connection shape with the header value's fingerprint and never the value", async () => {
    const s = await setup();
    const res = await s.call("", { json: staticBody({ provider: "Acme CRM", label: "Sales pipeline" }) });
    const text = await res.clone().text();
    const body = await json<{ connection: ConnectionBody }>(res, 201);
    expect(Object.keys(body)).toEqual(["connection"]);
    expect(Object.keys(body.connection)).toEqual(KEYS);
    expect(body.connection).toEqual({
      id: expect.stringMatching(/^conn_[a-z0-9]+$/), name: "crm", kind: "static", provider: "Acme CRM", label: "Sales pipeline",
      allowedHost: "api.example.com", headerName: "Authorization", status: "active", authScheme: null, instanceBaseUrl: null,
      scopes: null, expiresAt: null, secretFingerprint: await sha256Prefix(HEADER_SECRET), createdAt: expect.stringMatching(ISO),
    });
    expect(text).not.toContain("sk_live");
    const [stored] = await storedRows(s.app.app_id);
    expect(JSON.stringify(stored)).not.toContain("sk_live");
    expect(stored.secret_sealed).toMatch(/^v1\.[A-Za-z0-9_-]+$/);
  });

  it("creates an oauth2 connection waiting for consent: Bearer by default, scopes kept, the client secret only fingerprinted", async () => {
    const s = await setup();
    const res = await s.call("", { json: oauthBody({ instanceField: "instance_url", authParams: { prompt: "consent" }, tokenParams: { audience: "api" } }) });
    const text = await res.clone().text();
    const { connection } = await json<{ connection: ConnectionBody }>(res, 201);
    expect(connection).toMatchObject({
      name: "calendar", kind: "oauth2", allowedHost: "*.example.com", headerName: "Authorization", status: "pending_auth",
      authScheme: "Bearer", scopes: "read write", expiresAt: null, instanceBaseUrl: null, provider: null, label: null,
      secretFingerprint: await sha256Prefix(CLIENT_SECRET),
    });
    expect(text).not.toContain(CLIENT_SECRET);
    expect(JSON.stringify(await storedRows(s.app.app_id))).not.toContain(CLIENT_SECRET);
  });

  it("lowercases the allowed host, takes a custom header name and auth scheme, and works with the owner's session too", async () => {
    const s = await setup();
    const made = await json<{ connection: ConnectionBody }>(await call(s.path, {
      session: s.who.human.session, json: staticBody({ allowedHost: "API.Example.COM", headerName: "X-Api-Key", headerValue: "k-1" }),
    }), 201);
    expect(made.connection).toMatchObject({ allowedHost: "api.example.com", headerName: "X-Api-Key" });
    const oauth = await s.create(oauthBody({ authScheme: "token" }));
    expect(oauth.authScheme).toBe("token");
  });

  it("accepts loopback hosts and http loopback providers in development mode", async () => {
    const s = await setup();
    expect((await s.create(staticBody({ name: "local", allowedHost: "127.0.0.1" }))).allowedHost).toBe("127.0.0.1");
    expect((await s.create(staticBody({ name: "named", allowedHost: "localhost" }))).allowedHost).toBe("localhost");
    const local = await s.create(oauthBody({ name: "devprovider", authorizeUrl: "http://127.0.0.1:9/authorize", tokenEndpoint: "http://localhost:9/token" }));
    expect(local.status).toBe("pending_auth");
  });

  it("refuses a taken name (conflict) and stores nothing more", async () => {
    const s = await setup();
    await s.create(staticBody());
    const before = await storedRows(s.app.app_id);
    const e = await expectError(await s.call("", { json: staticBody({ headerValue: "other" }) }), 409, "conflict");
    expect(e.details).toEqual({ name: "crm" });
    expect(await storedRows(s.app.app_id)).toEqual(before);
  });

  it("refuses a connection past MAX_CONNECTIONS_PER_APP with connection_limit_reached", async () => {
    const s = await setup();
    const limited = { MAX_CONNECTIONS_PER_APP: "2" };
    for (const name of ["one", "two"]) {
      await json(await callWith(limited, s.path, { key: s.who.agent.api_key, json: staticBody({ name }) }), 201);
    }
    const e = await expectError(await callWith(limited, s.path, { key: s.who.agent.api_key, json: staticBody({ name: "three" }) }), 409, "connection_limit_reached");
    expect(e.details).toEqual({ limit: 2 });
    expect((await storedRows(s.app.app_id)).map((r) => r.name)).toEqual(["one", "two"]);
    // Deleting one makes room again.
    expect((await s.call("/one", { method: "DELETE" })).status).toBe(204);
    await json(await callWith(limited, s.path, { key: s.who.agent.api_key, json: staticBody({ name: "three" }) }), 201);
  });

  const refusals: Array<[string, Record<string, unknown>, string]> = [
    ["an uppercase name", staticBody({ name: "CRM" }), "name"],
    ["a name starting with -", staticBody({ name: "-crm" }), "name"],
    ["a name of 65 characters", staticBody({ name: `a${"b".repeat(64)}` }), "name"],
    ["an empty name", staticBody({ name: "" }), "name"],
    ["no name", { allowedHost: "api.example.com", headerValue: "x" }, "name"],
    ["no allowedHost", { name: "crm", headerValue: "x" }, "allowedHost"],
    ["a URL as allowedHost", staticBody({ allowedHost: "https://api.example.com" }), "allowedHost"],
    ["a port in allowedHost", staticBody({ allowedHost: "api.example.com:443" }), "allowedHost"],
    ["a path in allowedHost", staticBody({ allowedHost: "api.example.com/v1" }), "allowedHost"],
    ["userinfo in allowedHost", staticBody({ allowedHost: "user@api.example.com" }), "allowedHost"],
    ["two wildcards", staticBody({ allowedHost: "*.*.example.com" }), "allowedHost"],
    ["a wildcard not leftmost", staticBody({ allowedHost: "api.*.example.com" }), "allowedHost"],
    ["a bare wildcard", staticBody({ allowedHost: "*" }), "allowedHost"],
    ["a wildcard over a top-level domain", staticBody({ allowedHost: "*.com" }), "allowedHost"],
    ["a private IP literal", staticBody({ allowedHost: "10.0.0.7" }), "allowedHost"],
    ["an IPv6 literal", staticBody({ allowedHost: "[fd00::1]" }), "allowedHost"],
    ["a single-label host", staticBody({ allowedHost: "intranet" }), "allowedHost"],
    ["an unknown kind", staticBody({ kind: "basic" }), "kind"],
    ["a static connection without headerValue", { name: "crm", allowedHost: "api.example.com" }, "headerValue"],
    ["an empty headerValue", staticBody({ headerValue: "" }), "headerValue"],
    ["a headerValue with a line break", staticBody({ headerValue: "a\r\nX-Evil: 1" }), "headerValue"],
    ["a static connection with a clientId", staticBody({ clientId: "c" }), "clientId"],
    ["a header name that is not a token", staticBody({ headerName: "Bad Header" }), "headerName"],
    ["a header the relay sets", staticBody({ headerName: "Content-Type" }), "headerName"],
    ["a relay signature header", staticBody({ headerName: "X-Service-Signature" }), "headerName"],
    ["an unknown field", staticBody({ secret: "x" }), "secret"],
    ["an oauth2 connection without tokenEndpoint", oauthBody({ tokenEndpoint: undefined }), "tokenEndpoint"],
    ["an oauth2 connection without clientSecret", oauthBody({ clientSecret: undefined }), "clientSecret"],
    ["an oauth2 connection with a headerValue", oauthBody({ headerValue: "x" }), "headerValue"],
    ["a token endpoint on a private address", oauthBody({ tokenEndpoint: "https://10.1.2.3/token" }), "tokenEndpoint"],
    ["a token endpoint with userinfo", oauthBody({ tokenEndpoint: "https://u:p@auth.example.com/token" }), "tokenEndpoint"],
    ["an authorize URL that is not a URL", oauthBody({ authorizeUrl: "auth.example.com/authorize" }), "authorizeUrl"],
    ["a metadata host as authorize URL", oauthBody({ authorizeUrl: "https://metadata.google.internal/x" }), "authorizeUrl"],
    ["authParams setting state", oauthBody({ authParams: { state: "fixed" } }), "authParams.state"],
    ["tokenParams setting grant_type", oauthBody({ tokenParams: { grant_type: "password" } }), "tokenParams.grant_type"],
    ["authParams with a non-string value", oauthBody({ authParams: { prompt: 1 } }), "authParams.prompt"],
    ["an auth scheme of two words", oauthBody({ authScheme: "Bearer token" }), "authScheme"],
  ];

  for (const [what, body, field] of refusals) {
    it(`refuses ${what} with connection_invalid naming ${field}, storing nothing`, async () => {
      const s = await setup();
      const e = await expectError(await s.call("", { json: body }), 400, "connection_invalid");
      expect(e.details?.field).toBe(field);
      expect(e.message).toContain(field.split(".")[0]);
      expect(await storedRows(s.app.app_id)).toEqual([]);
    });
  }

  it("refuses plain http providers and loopback hosts in production mode", async () => {
    const s = await setup();
    const production = { RELAY_ENV: "production", CONNECTIONS_KEY: "a production connections key of 32+ characters" };
    const key = s.who.agent.api_key;
    const http = await expectError(await callWith(production, s.path, { key, json: oauthBody({ tokenEndpoint: "http://auth.example.com/token" }) }), 400, "connection_invalid");
    expect(http.details?.field).toBe("tokenEndpoint");
    const loopback = await expectError(await callWith(production, s.path, { key, json: staticBody({ allowedHost: "127.0.0.1" }) }), 400, "connection_invalid");
    expect(loopback.details?.field).toBe("allowedHost");
    await json(await callWith(production, s.path, { key, json: staticBody() }), 201);
  });

  it("is not offered in production without CONNECTIONS_KEY (501 not_implemented), storing nothing", async () => {
    const s = await setup();
    const e = await expectError(await callWith({ RELAY_ENV: "production" }, s.path, { key: s.who.agent.api_key, json: staticBody() }), 501, "not_implemented");
    expect(e.details).toEqual({ reason: "connections_key_missing" });
    expect(await storedRows(s.app.app_id)).toEqual([]);
  });

  it("keeps other owners out: their agent gets app_not_found, no credential 401", async () => {
    const s = await setup();
    const stranger = await owner();
    await expectError(await call(s.path, { key: stranger.agent.api_key, json: staticBody() }), 404, "app_not_found");
    await expectError(await call(s.path, { json: staticBody() }), 401, "unauthorized");
    await expectError(await call(s.path, { key: stranger.agent.api_key }), 404, "app_not_found");
    await expectError(await call(`${s.path}/crm`, { key: stranger.agent.api_key, method: "DELETE" }), 404, "app_not_found");
    expect(await storedRows(s.app.app_id)).toEqual([]);
  });
});

describe("GET and DELETE /v1/apps/:id/connections", () => {
  it("lists oldest first with fingerprints and no secrets; delete is idempotent and forgets the secret", async () => {
    const s = await setup();
    const first = await s.create(staticBody());
    const second = await s.create(oauthBody());
    const res = await s.call();
    const text = await res.clone().text();
    const list = await json<{ connections: ConnectionBody[] }>(res, 200);
    expect(Object.keys(list)).toEqual(["connections"]);
    expect(list.connections).toEqual([first, second]);
    expect(text).not.toContain("sk_live");
    expect(text).not.toContain(CLIENT_SECRET);

    expect((await s.call("/crm", { method: "DELETE" })).status).toBe(204);
    expect((await s.call("/crm", { method: "DELETE" })).status).toBe(204);
    expect((await s.call("/never-existed", { method: "DELETE" })).status).toBe(204);
    expect((await json<{ connections: ConnectionBody[] }>(await s.call(), 200)).connections).toEqual([second]);
    expect(JSON.stringify(await storedRows(s.app.app_id))).not.toContain(first.id);
  });

  it("an empty list for an app without connections", async () => {
    const s = await setup();
    expect(await json(await s.call(), 200)).toEqual({ connections: [] });
  });
});

describe("GET /v1/apps/:id/connections/:name/authorize", () => {
  it("sends the owner's browser to the provider with PKCE S256, state, the callback and the extra parameters", async () => {
    const s = await setup();
    await s.create(oauthBody({ authParams: { prompt: "consent", access_type: "offline" } }));
    const res = await call(`${s.path}/calendar/authorize`, { session: s.who.human.session, origin: null });
    expect(res.status).toBe(302);
    const to = new URL(res.headers.get("location")!);
    expect(to.origin + to.pathname).toBe("https://auth.example.com/authorize");
    const q = Object.fromEntries(to.searchParams);
    expect(q).toEqual({
      prompt: "consent", access_type: "offline", response_type: "code", client_id: "client-123",
      redirect_uri: "http://localhost:8787/oauth/connections/callback", state: expect.stringMatching(/^[A-Za-z0-9_-]{20,}$/),
      code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), code_challenge_method: "S256", scope: "read write",
    });
    // Each visit starts a consent of its own.
    const again = new URL((await call(`${s.path}/calendar/authorize`, { session: s.who.human.session, origin: null })).headers.get("location")!);
    expect(again.searchParams.get("state")).not.toBe(q.state);
    expect(again.searchParams.get("code_challenge")).not.toBe(q.code_challenge);
  });

  it("refuses an agent key (consent_owner_only) and sends a signed-out browser to sign in first", async () => {
    const s = await setup();
    await s.create(oauthBody());
    await expectError(await s.call("/calendar/authorize"), 403, "consent_owner_only");
    const signedOut = await call(`${s.path}/calendar/authorize`);
    expect(signedOut.status).toBe(302);
    expect(signedOut.headers.get("location")).toBe(`/signin?return_to=${encodeURIComponent(`${s.path}/calendar/authorize`)}`);
  });

  it("answers connection_not_found for an unknown name, connection_invalid for a static one, app_not_found to someone else", async () => {
    const s = await setup();
    await s.create(staticBody());
    const session = s.who.human.session;
    await expectError(await call(`${s.path}/nope/authorize`, { session }), 404, "connection_not_found");
    const e = await expectError(await call(`${s.path}/crm/authorize`, { session }), 400, "connection_invalid");
    expect(e.details).toEqual({ field: "kind" });
    const other = await signIn();
    await expectError(await call(`${s.path}/crm/authorize`, { session: other.session }), 404, "app_not_found");
  });
});

describe("GET /oauth/connections/callback", () => {
  it("answers a page saying why for a missing, unknown or replayed state, and changes nothing", async () => {
    const s = await setup();
    await s.create(oauthBody());
    const before = await storedRows(s.app.app_id);
    const missing = await call("/oauth/connections/callback?code=abc", { session: s.who.human.session });
    expect(missing.status).toBe(400);
    expect(missing.headers.get("content-type")).toMatch(/^text\/html/);
    expect(missing.headers.get("cache-control")).toBe("no-store");
    expect(await missing.text()).toContain("carries no state");
    const unknown = await call("/oauth/connections/callback?code=abc&state=made-up", { session: s.who.human.session });
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toContain("unknown, already used or expired");
    expect(await storedRows(s.app.app_id)).toEqual(before);
  });

  it("says so when the owner declined at the provider: the consent is spent, the connection still waits", async () => {
    const s = await setup();
    await s.create(oauthBody());
    const session = s.who.human.session;
    const state = new URL((await call(`${s.path}/calendar/authorize`, { session })).headers.get("location")!).searchParams.get("state")!;
    const declined = await call(`/oauth/connections/callback?error=access_denied&error_description=${encodeURIComponent("The user said no")}&state=${state}`, { session });
    expect(declined.status).toBe(400);
    const page = await declined.text();
    expect(page).toContain("Not connected");
    expect(page).toContain("access_denied: The user said no");
    expect((await storedRows(s.app.app_id))[0].status).toBe("pending_auth");
    const again = await call(`/oauth/connections/callback?code=abc&state=${state}`, { session });
    expect(await again.text()).toContain("unknown, already used or expired");
  });

  it("refuses a state started by the owner when someone else (or nobody) is signed in, keeping it for the owner", async () => {
    const s = await setup();
    await s.create(oauthBody());
    const to = new URL((await call(`${s.path}/calendar/authorize`, { session: s.who.human.session })).headers.get("location")!);
    const state = to.searchParams.get("state")!;
    const other = await signIn();
    const wrong = await call(`/oauth/connections/callback?code=abc&state=${state}`, { session: other.session });
    expect(wrong.status).toBe(403);
    expect(await wrong.text()).toContain("started by another account");
    const nobody = await call(`/oauth/connections/callback?code=abc&state=${state}`);
    expect(nobody.status).toBe(403);
    expect((await storedRows(s.app.app_id))[0].status).toBe("pending_auth");
  });
});
