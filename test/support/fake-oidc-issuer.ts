// A small OpenID Connect issuer on 127.0.0.1 for the identity-provider sign-in tests,
// strict where a real one is: discovery at /.well-known/openid-configuration, its signing
// key at /jwks, an authorization page that takes only a code request with a PKCE S256
// challenge, state, nonce, the openid scope and the registered client, and a token
// endpoint that checks the client secret (basic or post), spends each code once, checks
// the redirect_uri and PKCE verifier, and answers an RS256 ID token signed with jose.
//
// Its login page (`GET /authorize`) has an email box, an "email verified" box and Sign in
// / Deny buttons; both submit to `GET /login`, which a workerd test can also call
// directly. `/login` takes `tamper` to spoil the next ID token one way: `nonce`, `issuer`,
// `audience`, `expired` or `signature` (signed by a key the JWKS does not hold).
// A second issuer, `<origin>/broken`, answers 503 to everything: a provider that is down.
import { createHash, randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { escapeAttribute, readBody, sendJson, serveOnLoopback } from "./http-parts";

export interface FakeIssuerOptions {
  clientId: string;
  clientSecret: string;
}

export interface FakeIssuer {
  /** The issuer identifier (the server's origin) to configure as IDP_ISSUER. */
  issuer: string;
  /** An issuer on the same server whose every answer is 503. */
  brokenIssuer: string;
  /** The authorization requests seen, as their query parameters. */
  authorizations: Array<Record<string, string>>;
  close(): Promise<void>;
}

const TAMPERS = new Set(["nonce", "issuer", "audience", "expired", "signature"]);
const KEY_ID = "fake-issuer-key-1";

interface PendingCode {
  redirectUri: string;
  challenge: string;
  nonce: string;
  email: string;
  emailVerified: boolean;
  tamper: string | null;
}

function redirect(response: ServerResponse, location: string): void {
  response.writeHead(302, { location });
  response.end();
}

/** The client's id and secret from HTTP Basic (client_secret_basic) or the form (client_secret_post). */
function clientCredentials(request: IncomingMessage, form: URLSearchParams): { id: string; secret: string } {
  const basic = /^Basic (.+)$/i.exec(request.headers.authorization ?? "")?.[1];
  if (basic) {
    const [id, secret] = Buffer.from(basic, "base64").toString("utf8").split(":").map(decodeURIComponent);
    return { id: id ?? "", secret: secret ?? "" };
  }
  return { id: form.get("client_id") ?? "", secret: form.get("client_secret") ?? "" };
}

export async function startFakeOidcIssuer(options: FakeIssuerOptions): Promise<FakeIssuer> {
  const signing = await generateKeyPair("RS256", { extractable: true });
  const stranger = await generateKeyPair("RS256");
  const publicJwk = { ...(await exportJWK(signing.publicKey)), kid: KEY_ID, alg: "RS256", use: "sig" };
  const codes = new Map<string, PendingCode>();
  const authorizations: Array<Record<string, string>> = [];
  let issuer = "";

  const metadata = () => ({
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    jwks_uri: `${issuer}/jwks`,
    response_types_supported: ["code"],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: ["RS256"],
    token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
    code_challenge_methods_supported: ["S256"],
    scopes_supported: ["openid", "email", "profile"],
  });

  const authorize = (response: ServerResponse, query: URLSearchParams) => {
    const ok = query.get("response_type") === "code" && query.get("client_id") === options.clientId
      && query.get("code_challenge_method") === "S256" && (query.get("code_challenge") ?? "").length === 43
      && Boolean(query.get("state")) && Boolean(query.get("nonce")) && (query.get("scope") ?? "").split(" ").includes("openid")
      && (query.get("redirect_uri") ?? "").startsWith("http");
    if (!ok) {
      response.writeHead(400, { "content-type": "text/plain" });
      response.end("bad authorization request");
      return;
    }
    const hidden = [...query].map(([name, value]) => `<input type="hidden" name="${escapeAttribute(name)}" value="${escapeAttribute(value)}">`).join("");
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    response.end(`<!doctype html><title>Fake issuer</title><h1>Fake issuer sign-in</h1>`
      + `<form method="get" action="/login">${hidden}`
      + `<label>Email <input name="email" id="issuer-email" type="email"></label>`
      + `<label><input name="verified" id="issuer-verified" type="checkbox" value="true" checked> Email verified</label>`
      + `<button id="issuer-sign-in">Sign in</button><button id="issuer-deny" name="deny" value="1">Deny</button></form>`);
  };

  const login = (response: ServerResponse, query: URLSearchParams) => {
    if (!URL.canParse(query.get("redirect_uri") ?? "")) {
      response.writeHead(400, { "content-type": "text/plain" });
      response.end("no redirect_uri");
      return;
    }
    const back = new URL(query.get("redirect_uri")!);
    back.searchParams.set("state", query.get("state") ?? "");
    if (query.get("deny")) {
      back.searchParams.set("error", "access_denied");
      back.searchParams.set("error_description", "The person declined.");
      redirect(response, back.href);
      return;
    }
    const code = randomBytes(16).toString("hex");
    const tamper = query.get("tamper");
    codes.set(code, {
      redirectUri: query.get("redirect_uri") ?? "", challenge: query.get("code_challenge") ?? "", nonce: query.get("nonce") ?? "",
      email: query.get("email") ?? "", emailVerified: query.get("verified") === "true", tamper: tamper && TAMPERS.has(tamper) ? tamper : null,
    });
    back.searchParams.set("code", code);
    redirect(response, back.href);
  };

  const idToken = (pending: PendingCode): Promise<string> => {
    const now = Math.floor(Date.now() / 1000);
    const claims: Record<string, unknown> = { nonce: pending.tamper === "nonce" ? "not-the-nonce" : pending.nonce, email_verified: pending.emailVerified };
    if (pending.email) claims.email = pending.email;
    return new SignJWT(claims)
      .setProtectedHeader({ alg: "RS256", kid: KEY_ID, typ: "JWT" })
      .setIssuer(pending.tamper === "issuer" ? "http://issuer.invalid" : issuer)
      .setAudience(pending.tamper === "audience" ? "some-other-client" : options.clientId)
      .setSubject(`sub-${createHash("sha256").update(pending.email).digest("hex").slice(0, 16)}`)
      .setIssuedAt(pending.tamper === "expired" ? now - 7200 : now)
      .setExpirationTime(pending.tamper === "expired" ? now - 3600 : now + 300)
      .sign(pending.tamper === "signature" ? stranger.privateKey : signing.privateKey);
  };

  const token = async (request: IncomingMessage, response: ServerResponse) => {
    const form = new URLSearchParams(await readBody(request));
    const client = clientCredentials(request, form);
    if (client.id !== options.clientId || client.secret !== options.clientSecret) {
      sendJson(response, 401, { error: "invalid_client" });
      return;
    }
    const pending = codes.get(form.get("code") ?? "");
    codes.delete(form.get("code") ?? "");
    const challenge = createHash("sha256").update(form.get("code_verifier") ?? "").digest("base64url");
    if (form.get("grant_type") !== "authorization_code" || !pending || pending.redirectUri !== form.get("redirect_uri") || pending.challenge !== challenge) {
      sendJson(response, 400, { error: "invalid_grant", error_description: "code, redirect_uri or code_verifier does not match" });
      return;
    }
    sendJson(response, 200, { access_token: `at-${randomBytes(8).toString("hex")}`, token_type: "Bearer", expires_in: 300, id_token: await idToken(pending) });
  };

  const server = await serveOnLoopback({
    "GET /.well-known/openid-configuration": (_request, response) => sendJson(response, 200, metadata()),
    "GET /jwks": (_request, response) => sendJson(response, 200, { keys: [publicJwk] }),
    "GET /authorize": (_request, response, url) => {
      authorizations.push(Object.fromEntries(url.searchParams));
      authorize(response, url.searchParams);
    },
    "GET /login": (_request, response, url) => login(response, url.searchParams),
    "POST /token": token,
  }, (_request, response, url) => {
    const broken = url.pathname === "/broken" || url.pathname.startsWith("/broken/");
    sendJson(response, broken ? 503 : 404, { error: broken ? "temporarily_unavailable" : "not_found" });
  });
  issuer = server.origin;
  return {
    issuer,
    brokenIssuer: `${issuer}/broken`,
    authorizations,
    close: server.close,
  };
}
