// The steps of MCP's OAuth flow against the relay's own authorization server, as an MCP
// client and a signed-in person's browser take them: register a client (RFC 7591), open
// the approval page with PKCE S256, approve (picking an agent) or deny, exchange the code.
import { expect } from "vitest";
import { API, call, type CallOptions, type SignedIn } from "../helpers";

export const REDIRECT_URI = "http://127.0.0.1:33418/callback";
export const RESOURCE = `${API}/mcp`;

export interface Client {
  client_id: string;
  client_secret?: string;
}

export async function registerClient(metadata: Record<string, unknown> = {}): Promise<Client> {
  const res = await call("/oauth/register", {
    method: "POST",
    json: { client_name: "Test MCP client", redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], ...metadata },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return res.json();
}

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export async function pkce(): Promise<{ verifier: string; challenge: string }> {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))));
  return { verifier, challenge };
}

export function authorizePath(client: Client, params: Record<string, string | undefined>): string {
  const query = new URLSearchParams({ response_type: "code", client_id: client.client_id, redirect_uri: REDIRECT_URI, state: "state-1", resource: RESOURCE, scope: "mcp" });
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined) query.delete(name);
    else query.set(name, value);
  }
  return `/oauth/authorize?${query}`;
}

/** The page a signed-in person sees, with the form's handle and the browser-binding cookie it set. */
export interface ApprovalPage {
  html: string;
  handle: string;
  consentCookie: string;
}

export async function openApproval(human: SignedIn, path: string): Promise<ApprovalPage> {
  const res = await call(path, { session: human.session });
  const html = await res.text();
  expect(res.status, html).toBe(200);
  const handle = /name="handle" value="([^"]+)"/.exec(html)?.[1];
  const consentCookie = (res.headers.get("set-cookie") ?? "").split(";")[0];
  expect(handle).toBeDefined();
  expect(consentCookie).toMatch(/^__Host-oauth-consent/);
  return { html, handle: handle!, consentCookie };
}

/** Posts the approval form; answers the raw response (302 to the client, or an error page). */
export function decide(human: SignedIn, page: ApprovalPage, fields: Record<string, string>, opts: CallOptions = {}): Promise<Response> {
  return call("/oauth/authorize", {
    method: "POST", origin: API, contentType: "application/x-www-form-urlencoded",
    body: new URLSearchParams({ handle: page.handle, ...fields }).toString(),
    headers: { cookie: `relay_session=${human.session}; ${page.consentCookie}` }, ...opts,
  });
}

/** The client's redirect: its query parameters (code, state, iss, or error). */
export function redirectParams(res: Response): URLSearchParams {
  expect(res.status).toBe(302);
  const location = new URL(res.headers.get("location")!);
  expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
  return location.searchParams;
}

export function tokenRequest(fields: Record<string, string>): Promise<Response> {
  return call("/oauth/token", { method: "POST", contentType: "application/x-www-form-urlencoded", body: new URLSearchParams(fields).toString() });
}

export interface Tokens {
  access_token: string;
  refresh_token: string;
  token_type: string;
  expires_in: number;
  scope: string;
}

/** The whole flow for a public client: register, approve as `agentId`, exchange the code. */
export async function authorizeAs(human: SignedIn, agentId: string): Promise<{ client: Client; tokens: Tokens }> {
  const client = await registerClient();
  const { verifier, challenge } = await pkce();
  const page = await openApproval(human, authorizePath(client, { code_challenge: challenge, code_challenge_method: "S256" }));
  const params = redirectParams(await decide(human, page, { decision: "approve", agent_id: agentId }));
  expect(params.get("state")).toBe("state-1");
  const res = await tokenRequest({ grant_type: "authorization_code", code: params.get("code")!, redirect_uri: REDIRECT_URI, client_id: client.client_id, code_verifier: verifier, resource: RESOURCE });
  expect(res.status, await res.clone().text()).toBe(200);
  return { client, tokens: await res.json() };
}
