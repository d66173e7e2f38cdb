// The relay as its own OAuth 2.1 authorization server for /mcp: the metadata documents,
// dynamic registration, the approval page (sign-in, the agent picked, deny), PKCE S256
// required, a wrong verifier or redirect URI refused, refresh and revocation, and what a
// token is at /mcp: exactly the chosen agent, never more, and dead once the agent is
// paused, its keys revoked, or the token expired or revoked.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { API, awaitFreshWindow, call, claimedAgent, count, expectError, freshIp, signIn } from "../helpers";
import { mcpPost, rpcMessage, tool } from "./rpc";
import { REDIRECT_URI, RESOURCE, authorizeAs, authorizePath, decide, openApproval, pkce, redirectParams, registerClient, tokenRequest } from "./oauth-flow";

const LIST = { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} };

async function oauthError(res: Response): Promise<string> {
  return ((await res.json()) as { error: string }).error;
}

async function mcpStatus(token: string): Promise<number> {
  const res = await mcpPost(LIST, { key: token });
  await res.arrayBuffer();
  return res.status;
}

describe("MCP OAuth authorization server", () => {
  it("publishes RFC 8414 metadata, and the protected-resource metadata points at it", async () => {
    const res = await call("/.well-known/oauth-authorization-server");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      issuer: API, authorization_endpoint: `${API}/oauth/authorize`, token_endpoint: `${API}/oauth/token`,
      registration_endpoint: `${API}/oauth/register`, revocation_endpoint: `${API}/oauth/token`,
      code_challenge_methods_supported: ["S256"], response_types_supported: ["code"],
      grant_types_supported: expect.arrayContaining(["authorization_code", "refresh_token"]),
    });
    const resource = await (await call("/.well-known/oauth-protected-resource/mcp")).json();
    expect(resource).toMatchObject({ resource: RESOURCE, authorization_servers: [API] });
  });

  it("registers clients dynamically and refuses bad registrations in OAuth's own error form", async () => {
    const client = await registerClient();
    expect(client.client_id).toEqual(expect.any(String));
    for (const bad of [{ redirect_uris: [] }, { redirect_uris: ["javascript:alert(1)"] }, { redirect_uris: ["http://evil.example/cb"] }, { redirect_uris: "nope" }]) {
      const res = await call("/oauth/register", { method: "POST", json: { client_name: "bad", token_endpoint_auth_method: "none", ...bad } });
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(await oauthError(res)).toMatch(/^invalid_/);
    }
    // Registrations share agent registration's per-address budget (RATE_LIMIT_REGISTER = 10 here).
    await awaitFreshWindow();
    const ip = freshIp();
    for (let attempt = 0; attempt < 10; attempt += 1) expect((await call("/oauth/register", { method: "POST", json: { client_name: "burst", redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none" }, ip })).status).toBe(201);
    await expectError(await call("/oauth/register", { method: "POST", json: { client_name: "burst", redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none" }, ip }), 429, "rate_limited");
    const broken = await call("/oauth/register", { method: "POST", body: "{not json", contentType: "application/json" });
    expect(broken.status).toBe(400);
    await expectError(await call("/oauth/register", { method: "POST", body: "x".repeat(70_000), contentType: "application/json" }), 413, "payload_too_large");
  });

  it("signs the person in first, shows the client and its redirect host, and issues a token acting as the agent they picked", async () => {
    const human = await signIn();
    const first = await claimedAgent(human, "first agent");
    const chosen = await claimedAgent(human, "chosen agent");
    const client = await registerClient({ client_name: "Friendly <b>Client</b>" });
    const { challenge } = await pkce();
    const path = authorizePath(client, { code_challenge: challenge, code_challenge_method: "S256" });

    const signedOut = await call(path);
    expect(signedOut.status).toBe(302);
    expect(signedOut.headers.get("location")).toBe(`/signin?return_to=${encodeURIComponent(path)}`);

    const page = await openApproval(human, path);
    expect(page.html).toContain("Friendly &lt;b&gt;Client&lt;/b&gt;");
    expect(page.html).toContain('id="oauth-redirect-host">127.0.0.1<');
    expect(page.html).toContain('id="oauth-loopback-warning"');
    for (const agent of [first, chosen]) expect(page.html).toContain(`value="${agent.agent_id}"`);

    const { tokens } = await authorizeAs(human, chosen.agent_id);
    expect(tokens).toMatchObject({ token_type: "bearer", scope: "mcp" });
    const me = await tool(tokens.access_token, "agent", { action: "whoami" });
    expect(me.isError).toBe(false);
    expect(JSON.stringify(me.value)).toContain(chosen.agent_id);
    expect(JSON.stringify(me.value)).not.toContain(first.agent_id);
  });

  it("never gives more than the agent: another owner's app is app_not_found, and the token is no key for /v1", async () => {
    const human = await signIn();
    const agent = await claimedAgent(human, "mine");
    const stranger = await claimedAgent(await signIn(), "theirs");
    const manifest = { "x-service-manifest": { app: { name: "Theirs" }, collections: {} } };
    const deployed = await tool(stranger.api_key, "deploy_app", { html: "<!doctype html><title>Theirs</title>", manifest });
    expect(deployed.isError, deployed.text).toBe(false);
    const { tokens } = await authorizeAs(human, agent.agent_id);
    const foreign = await tool(tokens.access_token, "apps", { action: "show", app_id: deployed.value.app_id });
    expect(foreign.isError).toBe(true);
    expect(foreign.value.error).toBe("app_not_found");
    await expectError(await call("/v1/apps", { key: tokens.access_token }), 401, "unauthorized");
  });

  it("refuses a page for another person's agent, and deny sends access_denied and mints nothing", async () => {
    const human = await signIn();
    await claimedAgent(human, "mine");
    const stranger = await claimedAgent(await signIn(), "theirs");
    const client = await registerClient();
    const { challenge } = await pkce();
    const page = await openApproval(human, authorizePath(client, { code_challenge: challenge, code_challenge_method: "S256" }));
    const keysBefore = await count("agent_keys", "agent_id = ?1", stranger.agent_id);
    const refused = await decide(human, page, { decision: "approve", agent_id: stranger.agent_id });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('data-error-code="invalid_request"');
    expect(await count("agent_keys", "agent_id = ?1", stranger.agent_id)).toBe(keysBefore);

    const denied = redirectParams(await decide(human, page, { decision: "deny" }));
    expect(denied.get("error")).toBe("access_denied");
    expect(denied.get("state")).toBe("state-1");
    expect(denied.get("code")).toBeNull();
    // The handle works once.
    const again = await decide(human, page, { decision: "deny" });
    expect(again.status).toBe(400);
    expect(await again.text()).toContain('data-error-code="oauth_request_invalid"');
    // A foreign Origin cannot post the form.
    const forged = await decide(human, page, { decision: "deny" }, { origin: "http://evil.example" });
    expect(forged.status).toBe(403);
  });

  it("requires PKCE S256 from every client, and refuses a wrong verifier and a wrong redirect URI", async () => {
    const human = await signIn();
    const agent = await claimedAgent(human, "pkce");
    const client = await registerClient();
    for (const params of [{}, { code_challenge: "x".repeat(43), code_challenge_method: "plain" }]) {
      const res = await call(authorizePath(client, params), { session: human.session });
      expect(redirectParams(res).get("error")).toBe("invalid_request");
    }
    const confidential = await registerClient({ token_endpoint_auth_method: "client_secret_basic" });
    expect(confidential.client_secret).toEqual(expect.any(String));
    expect(redirectParams(await call(authorizePath(confidential, {}), { session: human.session })).get("error")).toBe("invalid_request");

    // A redirect URI the client never registered: shown here, never redirected to.
    const wrongRedirect = await call(authorizePath(client, { redirect_uri: "http://127.0.0.1:1/elsewhere", code_challenge: "x".repeat(43), code_challenge_method: "S256" }), { session: human.session });
    expect(wrongRedirect.status).toBe(400);
    expect(await wrongRedirect.text()).toContain('data-error-code="oauth_request_invalid"');

    const { verifier, challenge } = await pkce();
    const page = await openApproval(human, authorizePath(client, { code_challenge: challenge, code_challenge_method: "S256" }));
    const code = redirectParams(await decide(human, page, { decision: "approve", agent_id: agent.agent_id })).get("code")!;
    const exchange = { grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, client_id: client.client_id, code_verifier: verifier, resource: RESOURCE };
    const wrongVerifier = await tokenRequest({ ...exchange, code_verifier: (await pkce()).verifier });
    expect(wrongVerifier.status).toBe(400);
    expect(await oauthError(wrongVerifier)).toBe("invalid_grant");
    const noVerifier = await tokenRequest({ ...exchange, code_verifier: "" });
    expect(noVerifier.status).toBe(400);
    const wrongUri = await tokenRequest({ ...exchange, redirect_uri: "http://127.0.0.1:33418/other" });
    expect(wrongUri.status).toBe(400);
    expect(await oauthError(wrongUri)).toMatch(/^invalid_/);
  });

  it("refreshes, and a revoked refresh token ends the grant and retires its key", async () => {
    const human = await signIn();
    const agent = await claimedAgent(human, "refresh");
    const { client, tokens } = await authorizeAs(human, agent.agent_id);
    const refreshed = await tokenRequest({ grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: client.client_id });
    expect(refreshed.status).toBe(200);
    const next = await refreshed.json() as { access_token: string; refresh_token: string };
    expect(next.access_token).not.toBe(tokens.access_token);
    expect(await mcpStatus(next.access_token)).toBe(200);

    const liveKeys = await count("agent_keys", "agent_id = ?1 AND revoked_at IS NULL", agent.agent_id);
    const revoked = await tokenRequest({ token: next.refresh_token, token_type_hint: "refresh_token", client_id: client.client_id });
    expect(revoked.status).toBe(200);
    const res = await mcpPost(LIST, { key: next.access_token });
    expect(res.headers.get("www-authenticate")).toBe(`Bearer error="invalid_token", resource_metadata="${API}/.well-known/oauth-protected-resource"`);
    await expectError(res, 401, "oauth_token_invalid");
    expect(await count("agent_keys", "agent_id = ?1 AND revoked_at IS NULL", agent.agent_id)).toBe(liveKeys - 1);
    // The agent's own key is untouched.
    expect((await mcpPost(LIST, { key: agent.api_key })).status).toBe(200);
  });

  it("an expired token, a paused agent and revoked agent keys all stop the token", async () => {
    const human = await signIn();
    const agent = await claimedAgent(human, "stoppable");
    const { client, tokens } = await authorizeAs(human, agent.agent_id);
    expect(await mcpStatus(tokens.access_token)).toBe(200);
    const refresh = (refreshToken: string) => tokenRequest({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: client.client_id });

    await call(`/v1/self/agents/${agent.agent_id}/pause`, { method: "POST", session: human.session });
    await expectError(await mcpPost(LIST, { key: tokens.access_token }), 401, "oauth_token_invalid");
    // Paused, the grant still refreshes (resuming revives it); the new token is refused until then.
    const duringPause = await refresh(tokens.refresh_token);
    expect(duringPause.status).toBe(200);
    const { access_token: pausedToken, refresh_token: laterRefresh } = await duringPause.json() as { access_token: string; refresh_token: string };
    expect(await mcpStatus(pausedToken)).toBe(401);
    await call(`/v1/self/agents/${agent.agent_id}/resume`, { method: "POST", session: human.session });
    expect(await mcpStatus(pausedToken)).toBe(200);

    await call(`/v1/self/agents/${agent.agent_id}/revoke-key`, { method: "POST", session: human.session });
    await expectError(await mcpPost(LIST, { key: pausedToken }), 401, "oauth_token_invalid");
    // Revoked, a refresh is refused and ends the grant.
    const afterRevoke = await refresh(laterRefresh);
    expect(afterRevoke.status).toBe(400);
    expect(await oauthError(afterRevoke)).toBe("invalid_grant");

    // Expiry: the stored access token's expiry moved into the past.
    const fresh = await claimedAgent(human, "expiring");
    const second = await authorizeAs(human, fresh.agent_id);
    expect(await mcpStatus(second.tokens.access_token)).toBe(200);
    const [userId, grantId] = second.tokens.access_token.split(":");
    const stored = await env.OAUTH_KV.list({ prefix: `token:${userId}:${grantId}:` });
    expect(stored.keys.length).toBe(1);
    const record = await env.OAUTH_KV.get<Record<string, unknown>>(stored.keys[0].name, "json");
    await env.OAUTH_KV.put(stored.keys[0].name, JSON.stringify({ ...record, expiresAt: Math.floor(Date.now() / 1000) - 1 }));
    await expectError(await mcpPost(LIST, { key: second.tokens.access_token }), 401, "oauth_token_invalid");
    await expectError(await mcpPost(LIST, { key: "nobody:nothing:nothing" }), 401, "oauth_token_invalid");
  });

  it("answers every malformed request with a 4xx, never a 500, and changes nothing", async () => {
    const human = await signIn();
    const agent = await claimedAgent(human, "bad input");
    const client = await registerClient();
    const challenge = { code_challenge: "x".repeat(43), code_challenge_method: "S256" };
    const keysBefore = await count("agent_keys", "agent_id = ?1", agent.agent_id);
    const pages = [
      "/oauth/authorize", "/oauth/authorize?client_id=nobody", `/oauth/authorize?client_id=${client.client_id}`,
      authorizePath({ client_id: "nobody" }, challenge), authorizePath(client, { ...challenge, redirect_uri: "not a url" }),
      authorizePath(client, { ...challenge, response_type: "token" }), authorizePath(client, { ...challenge, resource: "http://elsewhere.example/mcp" }),
      authorizePath(client, { ...challenge, resource: "%%%" }), `${authorizePath(client, challenge)}&client_id=second`,
    ];
    for (const path of pages) {
      const res = await call(path, { session: human.session });
      await res.arrayBuffer();
      expect(res.status, path).toBeGreaterThanOrEqual(300);
      expect(res.status, path).toBeLessThan(500);
    }
    const page = await openApproval(human, authorizePath(client, challenge));
    const forms: Record<string, string>[] = [{ decision: "approve" }, { decision: "maybe", agent_id: agent.agent_id }, { decision: "approve", agent_id: agent.agent_id, handle: "forged" }, { decision: "deny", handle: "" }];
    for (const fields of forms) {
      const res = await decide(human, page, fields);
      await res.arrayBuffer();
      expect(res.status, JSON.stringify(fields)).toBe(400);
    }
    const noCookie = await decide(human, { ...page, consentCookie: "" }, { decision: "approve", agent_id: agent.agent_id });
    expect(noCookie.status).toBe(400);
    expect(await count("agent_keys", "agent_id = ?1", agent.agent_id)).toBe(keysBefore);
    const tokenBodies: Record<string, string>[] = [{}, { grant_type: "authorization_code" }, { grant_type: "password", username: "a" }, { grant_type: "refresh_token", refresh_token: "a:b:c", client_id: client.client_id }, { token: "whatever" }];
    for (const fields of tokenBodies) {
      const res = await tokenRequest(fields);
      await res.arrayBuffer();
      expect(res.status, JSON.stringify(fields)).toBeGreaterThanOrEqual(400);
      expect(res.status, JSON.stringify(fields)).toBeLessThan(500);
    }
    const jsonToken = await call("/oauth/token", { method: "POST", json: { grant_type: "authorization_code" } });
    expect(jsonToken.status).toBe(400);
    await expectError(await call("/oauth/token"), 405, "method_not_allowed");
  });

  it("re-approving the same client replaces its grant and retires the old grant's key", async () => {
    const human = await signIn();
    const agent = await claimedAgent(human, "again");
    const { client, tokens } = await authorizeAs(human, agent.agent_id);
    const { verifier, challenge } = await pkce();
    const page = await openApproval(human, authorizePath(client, { code_challenge: challenge, code_challenge_method: "S256" }));
    const code = redirectParams(await decide(human, page, { decision: "approve", agent_id: agent.agent_id })).get("code")!;
    const res = await tokenRequest({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, client_id: client.client_id, code_verifier: verifier, resource: RESOURCE });
    const replacement = await res.json() as { access_token: string };
    expect(await mcpStatus(replacement.access_token)).toBe(200);
    expect(await mcpStatus(tokens.access_token)).toBe(401);
    const message = await rpcMessage(await mcpPost(LIST, { key: replacement.access_token }));
    expect((message.result as { tools: unknown[] }).tools).toHaveLength(26);
  });
});
