// MCP's OAuth flow end to end, as a person meets it: the official MCP client (its
// Streamable HTTP transport with an OAuth provider) is pointed at the relay's /mcp with no
// key; it gets the 401, discovers the relay's authorization server, registers itself and
// sends the person to the approval page. Chromium signs in through the dev outbox, picks
// which of the person's two agents the client acts as and approves; the relay redirects to
// the client's loopback callback with the code; the client exchanges it (PKCE S256), lists
// the 26 tools, and `agent whoami` names the agent the person picked. Then the person
// disconnects it on the console's MCP clients page: its token answers 401 and the client's
// next call fails.
// Every request stays on loopback.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait";
import { api, relayUrl, signInHere, signInLink, uniqueEmail, useBrowser } from "./support";

const { newPage } = useBrowser();

/** The client's loopback redirect target: it records the code (or error) the relay sends back. */
let callback: Server;
let callbackUrl: string;
const received: URLSearchParams[] = [];

beforeAll(async () => {
  callback = createServer((req, res) => {
    received.push(new URL(req.url ?? "/", "http://127.0.0.1").searchParams);
    res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>Connected</title><p id='done'>You can close this window.</p>");
  });
  await new Promise<void>((resolve) => callback.listen(0, "127.0.0.1", resolve));
  callbackUrl = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
});

afterAll(async () => {
  await new Promise((resolve) => callback?.close(resolve));
});

/** An in-memory OAuth client, as an MCP host keeps one per server. */
class MemoryOAuthClient implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = "";
  authorizationUrl?: URL;

  get redirectUrl(): string {
    return callbackUrl;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: "Browser test MCP client", redirect_uris: [callbackUrl], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" };
  }
  clientInformation() { return this.client; }
  saveClientInformation(info: OAuthClientInformationMixed) { this.client = info; }
  tokens() { return this.saved; }
  saveTokens(tokens: OAuthTokens) { this.saved = tokens; }
  redirectToAuthorization(url: URL) { this.authorizationUrl = url; }
  saveCodeVerifier(verifier: string) { this.verifier = verifier; }
  codeVerifier() { return this.verifier; }
}

function transportFor(provider: OAuthClientProvider): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL(`${relayUrl}/mcp`), { authProvider: provider });
}

/** A person (signed in over HTTP for the setup) with two claimed agents. */
async function personWithTwoAgents(): Promise<{ email: string; agents: Array<{ agent_id: string; api_key: string }> }> {
  const email = uniqueEmail("mcp-oauth");
  expect((await api("/v1/auth/request-link", { body: { email } })).status).toBe(200);
  const verify = await fetch(await signInLink(email), { redirect: "manual" });
  const cookie = /relay_session=[^;]+/.exec(verify.headers.get("set-cookie") ?? "")?.[0];
  expect(cookie).toBeDefined();
  const agents = [];
  for (const name of ["first-agent", "picked-agent"]) {
    const code = await api<{ code: string }>("/v1/self/claim-codes", { method: "POST", cookie });
    const agent = await api<{ agent_id: string; api_key: string }>("/v1/register", { body: { name } });
    expect((await api("/v1/agents/claim", { body: { code: code.body.code }, key: agent.body.api_key })).status).toBe(200);
    agents.push(agent.body);
  }
  return { email, agents };
}

describe("MCP OAuth in Chromium", () => {
  it("the official client is authorized by the person, acts as the agent they picked, and lists the tools", async () => {
    const { email, agents: [first, picked] } = await personWithTwoAgents();

    const provider = new MemoryOAuthClient();
    await expect(new Client({ name: "oauth-browser-test", version: "0" }).connect(transportFor(provider))).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.client?.client_id).toEqual(expect.any(String));
    const authorizationUrl = provider.authorizationUrl!;
    expect(`${authorizationUrl.origin}${authorizationUrl.pathname}`).toBe(`${relayUrl}/oauth/authorize`);
    expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorizationUrl.searchParams.get("resource")).toBe(`${relayUrl}/mcp`);

    const page = await newPage([new URL(callbackUrl).origin]);
    await page.goto(authorizationUrl.toString());
    await signInHere(page, email);
    await page.locator("#oauth-client-name", { hasText: "Browser test MCP client" }).waitFor();
    expect(await page.locator("#oauth-redirect-host").textContent()).toBe("127.0.0.1");
    expect(await page.locator('input[name="agent_id"]').count()).toBe(2);
    await page.locator(`input[name="agent_id"][value="${picked.agent_id}"]`).check();
    await page.locator("#approve").click();
    await page.locator("#done").waitFor();

    const answer = await waitFor(() => received.find((params) => params.get("code")), { message: "the authorization code at the callback" });
    expect(answer.get("iss")).toBe(relayUrl);
    const transport = transportFor(provider);
    await transport.finishAuth(answer.get("code")!);
    expect(provider.saved?.access_token).toEqual(expect.any(String));
    expect(provider.saved?.refresh_token).toEqual(expect.any(String));

    const client = new Client({ name: "oauth-browser-test", version: "0" });
    await client.connect(transport);
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(26);
    const whoami = await client.callTool({ name: "agent", arguments: { action: "whoami" } }) as { content: Array<{ text: string }>; isError?: boolean };
    expect(whoami.isError ?? false).toBe(false);
    expect(whoami.content[0].text).toContain(picked.agent_id);
    expect(whoami.content[0].text).not.toContain(first.agent_id);

    // The person disconnects the client in the console; its token and its next call are refused.
    await page.goto(`${relayUrl}/`);
    await page.locator("#my-mcp-clients").click();
    const row = page.locator("#mcp-clients tbody tr", { hasText: "Browser test MCP client" });
    await expect(row.locator('[data-field="agent"]').textContent()).resolves.toBe("picked-agent");
    await row.locator('[data-action="disconnect"]').click();
    await page.locator("#no-mcp-clients").waitFor();
    const stopped = await fetch(`${relayUrl}/mcp`, {
      method: "POST", body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      headers: { authorization: `Bearer ${provider.saved!.access_token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    });
    expect(stopped.status).toBe(401);
    await expect(client.listTools()).rejects.toThrow();
    await client.close();
  });
});
