/**
 * Signing people in through the operator's OpenID Connect provider (issue 14 item 7), on
 * oauth4webapi (STACK: a maintained client that runs in workerd) rather than protocol code
 * of our own: discovery from the configured issuer, the authorization-code flow with PKCE
 * (S256), `state` and `nonce`, the code exchange with the client secret, and the ID
 * token's checks — issuer, audience, nonce, expiry (oauth4webapi's token-response
 * processing) and its signature against the issuer's published keys (JWKS). What comes
 * out is an email address the provider says it verified, or the catalogue code that says
 * why not. The pending attempt itself is kept by the caller (src/db/idp-attempts.ts).
 *
 * The issuer is the operator's own setting, not something a request chose, so its calls
 * are plain fetches with a deadline; plain http is only ever allowed in development mode
 * (CONTRACT §3), which oauth4webapi needs told on every call (`allowInsecureRequests`).
 * A provider that cannot be reached or answers 5xx is `auth_provider_unavailable`.
 */
import * as oauth from "oauth4webapi";
import * as z from "zod";
import type { IdpSettings } from "../config";
import type { IdpAttempt } from "../db/idp-attempts";

const PROVIDER_TIMEOUT_MS = 10_000;

/** Why a sign-in through the provider did not produce a verified address, as a catalogue code and a sentence. */
export type IdpRefusal = {
  code: "auth_provider_unavailable" | "idp_access_denied" | "idp_token_invalid" | "email_not_verified";
  reason: string;
};

export type IdpOutcome = { kind: "verified"; email: string } | ({ kind: "refused" } & IdpRefusal);

/** The provider did not answer usably (network, deadline, 5xx): nothing the person can fix. */
class ProviderUnreachable extends Error {}

/** Every call's options: a deadline, http only in development, and unreachable or 5xx providers told apart. */
function requestOptions<Method, Body>(development: boolean): oauth.HttpRequestOptions<Method, Body> {
  return {
    signal: () => AbortSignal.timeout(PROVIDER_TIMEOUT_MS),
    [oauth.allowInsecureRequests]: development,
    [oauth.customFetch]: async (url: string, init: oauth.CustomFetchOptions<Method, Body>) => {
      let response: Response;
      try {
        response = await fetch(url, init as RequestInit);
      } catch (err) {
        throw new ProviderUnreachable(`${new URL(url).host} did not answer: ${err instanceof Error ? err.message : String(err)}`);
      }
      if (response.status >= 500) throw new ProviderUnreachable(`${new URL(url).host} answered ${response.status}`);
      return response;
    },
  };
}

/** The provider's metadata from `<issuer>/.well-known/openid-configuration`; throws ProviderUnreachable when it cannot be had. */
async function discover(settings: IdpSettings, development: boolean): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(settings.issuer);
  try {
    const server = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: "oidc", ...requestOptions(development) }));
    if (!server.authorization_endpoint || !server.token_endpoint || !server.jwks_uri) {
      throw new ProviderUnreachable("its metadata lacks an authorization endpoint, a token endpoint or a JWKS URI");
    }
    return server;
  } catch (err) {
    if (err instanceof ProviderUnreachable) throw err;
    throw new ProviderUnreachable(`its discovery document does not hold: ${messageOf(err)}`);
  }
}

function client(settings: IdpSettings): oauth.Client {
  return { client_id: settings.clientId };
}

/** client_secret_basic, the OpenID default, unless the provider lists only client_secret_post. */
function clientAuth(server: oauth.AuthorizationServer, settings: IdpSettings): oauth.ClientAuth {
  const methods = server.token_endpoint_auth_methods_supported;
  const postOnly = methods !== undefined && !methods.includes("client_secret_basic") && methods.includes("client_secret_post");
  return postOnly ? oauth.ClientSecretPost(settings.clientSecret) : oauth.ClientSecretBasic(settings.clientSecret);
}

/**
 * A fresh attempt (state, nonce and PKCE verifier, to keep until the callback) and the
 * provider's authorization URL to send the browser to. Throws ProviderUnreachable.
 */
export async function beginIdpSignIn(
  settings: IdpSettings, redirectUri: string, returnTo: string | null, development: boolean,
): Promise<{ url: string; attempt: IdpAttempt }> {
  const server = await discover(settings, development);
  const attempt: IdpAttempt = {
    state: oauth.generateRandomState(), nonce: oauth.generateRandomNonce(), codeVerifier: oauth.generateRandomCodeVerifier(), returnTo,
  };
  const url = new URL(server.authorization_endpoint!);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", settings.clientId);
  url.searchParams.set("redirect_uri", redirectUri);
  url.searchParams.set("scope", settings.scopes);
  url.searchParams.set("state", attempt.state);
  url.searchParams.set("nonce", attempt.nonce);
  url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(attempt.codeVerifier));
  url.searchParams.set("code_challenge_method", "S256");
  return { url: url.href, attempt };
}

/** A start that failed before the browser left: the provider is unreachable. */
export function isProviderUnreachable(err: unknown): err is Error {
  return err instanceof ProviderUnreachable;
}

const verifiedClaims = z.object({ email: z.email().max(254), email_verified: z.literal(true) });

/**
 * Finishes the attempt the provider sent the browser back for (`callback` is the query it
 * came with; the attempt was already taken by its state): exchanges the code, checks the
 * ID token and reads its verified email address.
 */
export async function completeIdpSignIn(
  settings: IdpSettings, callback: URLSearchParams, attempt: IdpAttempt, redirectUri: string, development: boolean,
): Promise<IdpOutcome> {
  try {
    const server = await discover(settings, development);
    let validated: URLSearchParams;
    try {
      validated = oauth.validateAuthResponse(server, client(settings), callback, attempt.state);
    } catch (err) {
      if (err instanceof oauth.AuthorizationResponseError) {
        const detail = err.error_description ? `: ${err.error_description.slice(0, 200)}` : "";
        return refused(err.error === "access_denied" ? "idp_access_denied" : "idp_token_invalid", `the provider answered ${err.error.slice(0, 64)}${detail}`);
      }
      throw err;
    }
    const response = await oauth.authorizationCodeGrantRequest(
      server, client(settings), clientAuth(server, settings), validated, redirectUri, attempt.codeVerifier, requestOptions(development),
    );
    const tokens = await oauth.processAuthorizationCodeResponse(server, client(settings), response, { expectedNonce: attempt.nonce, requireIdToken: true });
    await oauth.validateApplicationLevelSignature(server, response, requestOptions(development));
    const claims = verifiedClaims.safeParse(oauth.getValidatedIdTokenClaims(tokens));
    if (!claims.success) return refused("email_not_verified", "the provider vouches for no verified email address for this account");
    return { kind: "verified", email: claims.data.email };
  } catch (err) {
    if (err instanceof ProviderUnreachable) return refused("auth_provider_unavailable", err.message);
    return refused("idp_token_invalid", messageOf(err).slice(0, 300));
  }
}

function refused(code: IdpRefusal["code"], reason: string): IdpOutcome {
  return { kind: "refused", code, reason };
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
