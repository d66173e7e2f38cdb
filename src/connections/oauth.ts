/**
 * The oauth2 side of connections, on oauth4webapi (STACK: a maintained client that runs
 * in workerd) rather than protocol code of our own: the authorization URL with PKCE (S256)
 * and `state`, the code exchange at the callback, and the refresh grant. The provider is
 * described by the connection itself (authorize URL, token endpoint, client id and
 * secret, extra parameters), never discovered.
 *
 * Every request to a token endpoint goes through the relay's outbound fetch (the SSRF
 * guard, no redirects, a deadline and a size cap; src/effects/outbound-fetch.ts). Plain
 * http is only ever allowed to development-mode loopback providers (CONTRACT §3), which
 * oauth4webapi needs told on every call (`allowInsecureRequests`). Connections use access
 * tokens only, so an ID token an OIDC provider adds for the `openid` scope is dropped
 * before oauth4webapi would check it against an issuer the relay does not know.
 */
import * as oauth from "oauth4webapi";
import { outboundFetch } from "../effects/outbound-fetch";

export interface OAuthProvider {
  authorizeUrl: string;
  tokenEndpoint: string;
  clientId: string;
  clientSecret: string;
  /** Space-delimited; null: the provider's default. */
  scopes: string | null;
  authParams: Record<string, string>;
  tokenParams: Record<string, string>;
}

export type Tokens = oauth.TokenEndpointResponse;

/** A token request's outcome, its failures worded for a delivery journal. */
export type TokenOutcome =
  | { kind: "issued"; tokens: Tokens }
  /** The provider refused the grant itself (invalid_grant): revoked, expired or spent; only a new consent helps. */
  | { kind: "grant_refused"; error: string }
  | { kind: "failed"; error: string };

const TOKEN_TIMEOUT_MS = 10_000;
const TOKEN_MAX_RESPONSE_BYTES = 65_536;

function server(provider: OAuthProvider): oauth.AuthorizationServer {
  return { issuer: new URL(provider.tokenEndpoint).origin, authorization_endpoint: provider.authorizeUrl, token_endpoint: provider.tokenEndpoint };
}

function client(provider: OAuthProvider): oauth.Client {
  return { client_id: provider.clientId };
}

/** The relay's outbound fetch in the shape oauth4webapi calls; a refused or failed request throws with its reason. */
function guardedFetch(development: boolean): NonNullable<oauth.TokenEndpointRequestOptions[typeof oauth.customFetch]> {
  return async (url, options) => {
    const result = await outboundFetch(url, {
      method: options.method, headers: options.headers, body: options.body.toString(),
      timeoutMs: TOKEN_TIMEOUT_MS, maxResponseBytes: TOKEN_MAX_RESPONSE_BYTES,
    }, { development });
    if (result.error !== null || result.status === null) throw new Error(result.error ?? "no response");
    if (result.bodyTruncated) throw new Error(`the token endpoint's answer is over ${TOKEN_MAX_RESPONSE_BYTES} bytes`);
    return new Response(withoutIdToken(result.body), { status: result.status, headers: result.headers ?? undefined });
  };
}

/** The token response without `id_token` (see the header); anything that is not a JSON object passes as it is. */
function withoutIdToken(body: string): string {
  try {
    const parsed: unknown = JSON.parse(body);
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed) || !("id_token" in parsed)) return body;
    const { id_token: _dropped, ...rest } = parsed as Record<string, unknown>;
    return JSON.stringify(rest);
  } catch {
    return body;
  }
}

function tokenOptions(provider: OAuthProvider, development: boolean): oauth.TokenEndpointRequestOptions {
  return {
    additionalParameters: provider.tokenParams,
    [oauth.customFetch]: guardedFetch(development),
    [oauth.allowInsecureRequests]: development,
  };
}

/** The URL where the provider sends the owner back, registered with the provider as the redirect URI. */
export function callbackUrl(apiOrigin: string): string {
  return `${apiOrigin}/oauth/connections/callback`;
}

export interface ConsentStart {
  url: string;
  state: string;
  codeVerifier: string;
}

/** Where to send the owner for consent, with a fresh `state` and PKCE verifier to keep until the callback. */
export async function consentStart(provider: OAuthProvider, redirectUri: string): Promise<ConsentStart> {
  const codeVerifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(provider.authorizeUrl);
  for (const [name, value] of Object.entries(provider.authParams)) url.searchParams.set(name, value);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", provider.clientId);
  url.searchParams.set("redirect_uri", redirectUri);
  url.searchParams.set("state", state);
  url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(codeVerifier));
  url.searchParams.set("code_challenge_method", "S256");
  if (provider.scopes) url.searchParams.set("scope", provider.scopes);
  return { url: url.href, state, codeVerifier };
}

function describe(err: unknown): TokenOutcome {
  if (err instanceof oauth.ResponseBodyError) {
    const detail = err.error_description ? `: ${err.error_description.slice(0, 200)}` : "";
    const error = `the token endpoint answered ${err.status} ${err.error}${detail}`;
    return err.error === "invalid_grant" ? { kind: "grant_refused", error } : { kind: "failed", error };
  }
  if (err instanceof oauth.AuthorizationResponseError) {
    const detail = err.error_description ? `: ${err.error_description.slice(0, 200)}` : "";
    return { kind: "grant_refused", error: `the provider answered ${err.error}${detail}` };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { kind: "failed", error: `the token request failed: ${message.slice(0, 300)}` };
}

/**
 * Exchanges the code the provider sent back (its query parameters, `state` already
 * matched by the caller) for tokens. A provider that answered with an error (the owner
 * declined) is `grant_refused`.
 */
export async function exchangeCode(
  provider: OAuthProvider, callback: URLSearchParams, state: string, codeVerifier: string, redirectUri: string, development: boolean,
): Promise<TokenOutcome> {
  try {
    // `iss` (RFC 9207) names an issuer the relay never discovered; state and PKCE bind this response instead.
    const params = new URLSearchParams(callback);
    params.delete("iss");
    const validated = oauth.validateAuthResponse(server(provider), client(provider), params, state);
    const response = await oauth.authorizationCodeGrantRequest(
      server(provider), client(provider), oauth.ClientSecretPost(provider.clientSecret), validated, redirectUri, codeVerifier, tokenOptions(provider, development),
    );
    return { kind: "issued", tokens: await oauth.processAuthorizationCodeResponse(server(provider), client(provider), response) };
  } catch (err) {
    return describe(err);
  }
}

/** A new access token (and perhaps a new refresh token) for `refreshToken`. */
export async function refreshGrant(provider: OAuthProvider, refreshToken: string, development: boolean): Promise<TokenOutcome> {
  try {
    const response = await oauth.refreshTokenGrantRequest(
      server(provider), client(provider), oauth.ClientSecretPost(provider.clientSecret), refreshToken, tokenOptions(provider, development),
    );
    return { kind: "issued", tokens: await oauth.processRefreshTokenResponse(server(provider), client(provider), response) };
  } catch (err) {
    return describe(err);
  }
}
