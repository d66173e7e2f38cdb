// A small oauth2 provider on 127.0.0.1 for the connections tests, strict where a real one
// is: the consent page takes only a code request with a PKCE S256 challenge and state; the
// token endpoint checks the client secret (client_secret_post), spends each code once,
// checks its redirect_uri and PKCE verifier, rotates refresh tokens on every refresh, and
// answers invalid_grant for a spent, unknown or revoked one. Tokens live `expiresIn`
// seconds and carry an `instance_url` beside them. It records every request it gets.
import { createHash, randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { escapeAttribute, readBody, sendJson, serveOnLoopback } from "../support/http-parts";

export interface FakeProviderOptions {
  clientId: string;
  clientSecret: string;
  /** Lifetime of each access token, in seconds. */
  expiresIn: number;
  instanceUrl: string;
}

export interface FakeProvider {
  origin: string;
  /** The authorization requests seen, as their query parameters. */
  authorizations: Array<Record<string, string>>;
  /** The token requests seen, as their form fields (client_secret left out). */
  tokenRequests: Array<Record<string, string>>;
  /** The refresh token handed out last. */
  currentRefreshToken(): string | null;
  /** Revokes a refresh token: the next refresh with it is invalid_grant. */
  revoke(refreshToken: string): void;
  close(): Promise<void>;
}

interface PendingCode {
  clientId: string;
  redirectUri: string;
  challenge: string;
}

export async function startFakeProvider(options: FakeProviderOptions): Promise<FakeProvider> {
  const codes = new Map<string, PendingCode>();
  const liveRefreshTokens = new Set<string>();
  const authorizations: Array<Record<string, string>> = [];
  const tokenRequests: Array<Record<string, string>> = [];
  let issued = 0;
  let lastRefresh: string | null = null;

  const issue = (response: ServerResponse) => {
    issued += 1;
    lastRefresh = `rt-${issued}-${randomBytes(6).toString("hex")}`;
    liveRefreshTokens.add(lastRefresh);
    sendJson(response, 200, {
      access_token: `at-${issued}-${randomBytes(6).toString("hex")}`, token_type: "Bearer", expires_in: options.expiresIn,
      refresh_token: lastRefresh, scope: "calendar.read", instance_url: options.instanceUrl,
    });
  };

  const consentPage = (response: ServerResponse, query: URLSearchParams) => {
    const hidden = [...query].map(([name, value]) => `<input type="hidden" name="${escapeAttribute(name)}" value="${escapeAttribute(value)}">`).join("");
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    response.end(`<!doctype html><title>Fake provider</title><h1>Allow access?</h1><p id="consent-client">${escapeAttribute(query.get("client_id") ?? "")}</p>`
      + `<form method="get" action="/consent">${hidden}<button id="allow">Allow</button></form>`);
  };

  const consent = (response: ServerResponse, query: URLSearchParams) => {
    const redirectUri = query.get("redirect_uri") ?? "";
    const ok = query.get("response_type") === "code" && query.get("client_id") === options.clientId && query.get("code_challenge_method") === "S256"
      && (query.get("code_challenge") ?? "").length === 43 && Boolean(query.get("state")) && redirectUri.startsWith("http");
    if (!ok) {
      response.writeHead(400, { "content-type": "text/plain" });
      response.end("bad authorization request");
      return;
    }
    const code = randomBytes(16).toString("hex");
    codes.set(code, { clientId: options.clientId, redirectUri, challenge: query.get("code_challenge")! });
    const back = new URL(redirectUri);
    back.searchParams.set("code", code);
    back.searchParams.set("state", query.get("state")!);
    response.writeHead(302, { location: back.href });
    response.end();
  };

  const token = async (request: IncomingMessage, response: ServerResponse) => {
    const form = new URLSearchParams(await readBody(request));
    const { client_secret: secret, ...seen } = Object.fromEntries(form);
    tokenRequests.push(seen);
    if (form.get("client_id") !== options.clientId || secret !== options.clientSecret) {
      sendJson(response, 401, { error: "invalid_client" });
      return;
    }
    if (form.get("grant_type") === "authorization_code") {
      const pending = codes.get(form.get("code") ?? "");
      codes.delete(form.get("code") ?? "");
      const verifier = form.get("code_verifier") ?? "";
      const challenge = createHash("sha256").update(verifier).digest("base64url");
      if (!pending || pending.redirectUri !== form.get("redirect_uri") || pending.challenge !== challenge) {
        sendJson(response, 400, { error: "invalid_grant", error_description: "code, redirect_uri or code_verifier does not match" });
        return;
      }
      issue(response);
      return;
    }
    if (form.get("grant_type") === "refresh_token") {
      const presented = form.get("refresh_token") ?? "";
      if (!liveRefreshTokens.delete(presented)) {
        sendJson(response, 400, { error: "invalid_grant", error_description: "the refresh token is revoked or unknown" });
        return;
      }
      issue(response);
      return;
    }
    sendJson(response, 400, { error: "unsupported_grant_type" });
  };

  const server = await serveOnLoopback({
    "GET /authorize": (_request, response, url) => {
      authorizations.push(Object.fromEntries(url.searchParams));
      consentPage(response, url.searchParams);
    },
    "GET /consent": (_request, response, url) => consent(response, url.searchParams),
    "POST /token": token,
  });
  return {
    origin: server.origin,
    authorizations,
    tokenRequests,
    currentRefreshToken: () => lastRefresh,
    revoke: (refreshToken) => {
      liveRefreshTokens.delete(refreshToken);
    },
    close: server.close,
  };
}
