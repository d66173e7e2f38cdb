// Sign-in through the operator's identity provider (issue 14 item 7), against the fake
// OpenID issuer on 127.0.0.1 (test/support/fake-oidc-issuer.ts): off unless configured
// (503 auth_provider_unavailable, status idp false); the authorization request carries
// PKCE S256, state and nonce; a verified address signs in as the same human a magic link
// would; and every failure (denied, bad or replayed state, a spoiled ID token, an
// unverified address, a provider that is down) lands on /signin?error=<code> with no
// session and no human created.
import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { config } from "../../../src/config";
import { catalogue } from "../../../src/errors";
import { sha256Hex } from "../../../src/auth/tokens";
import { API, callWith, count, expectError, freshEmail, json, sessionFrom, signIn, type CallOptions } from "../helpers";
import { FAKE_IDP_CLIENT_ID, FAKE_IDP_CLIENT_SECRET } from "../../support/fake-oidc-issuer-types";

const { issuer, brokenIssuer } = inject("oidcIssuer");
const IDP = { IDP_ISSUER: issuer, IDP_CLIENT_ID: FAKE_IDP_CLIENT_ID, IDP_CLIENT_SECRET: FAKE_IDP_CLIENT_SECRET, IDP_NAME: "Fake IdP" };
const CALLBACK = `${API}/v1/auth/idp/callback`;

interface Started {
  /** The provider's authorization URL the relay redirected to. */
  authorize: URL;
  /** The attempt cookie, as a Cookie header value. */
  cookie: string;
  setCookie: string;
}

async function start(returnTo?: string, overrides: Record<string, unknown> = IDP): Promise<Started> {
  const res = await callWith(overrides, `/v1/auth/idp${returnTo === undefined ? "" : `?return_to=${encodeURIComponent(returnTo)}`}`);
  expect(res.status, await res.clone().text()).toBe(302);
  const setCookie = res.headers.get("set-cookie") ?? "";
  const cookie = /relay_idp_attempt=[^;]+/.exec(setCookie)?.[0];
  expect(cookie).toBeTruthy();
  return { authorize: new URL(res.headers.get("location")!), cookie: cookie!, setCookie };
}

interface AtIssuer { email?: string; verified?: boolean; deny?: boolean; tamper?: string }

/** What the person does on the provider's login page: the callback URL it sends the browser back to. */
async function atIssuer(started: Started, choice: AtIssuer): Promise<URL> {
  const page = await fetch(started.authorize);
  expect(page.status, await page.clone().text()).toBe(200);
  const login = new URL("/login", issuer);
  for (const [name, value] of started.authorize.searchParams) login.searchParams.set(name, value);
  if (choice.email !== undefined) login.searchParams.set("email", choice.email);
  if (choice.verified ?? true) login.searchParams.set("verified", "true");
  if (choice.deny) login.searchParams.set("deny", "1");
  if (choice.tamper) login.searchParams.set("tamper", choice.tamper);
  const back = await fetch(login, { redirect: "manual" });
  expect(back.status).toBe(302);
  return new URL(back.headers.get("location")!);
}

function back(callback: URL, cookie: string | null, overrides: Record<string, unknown> = IDP, opts: CallOptions = {}): Promise<Response> {
  expect(callback.href.startsWith(CALLBACK)).toBe(true);
  return callWith(overrides, callback.pathname + callback.search, { ...opts, headers: cookie ? { cookie } : {} });
}

/** A failure: back to the sign-in page with the catalogue code, no session cookie. */
function expectRefused(res: Response, code: keyof typeof catalogue, returnTo?: string): void {
  expect(res.status).toBe(302);
  const location = new URL(res.headers.get("location")!, API);
  expect(location.pathname).toBe("/signin");
  expect(location.searchParams.get("error")).toBe(code);
  expect(code in catalogue).toBe(true);
  if (returnTo !== undefined) expect(location.searchParams.get("return_to")).toBe(returnTo);
  expect(sessionFrom(res)).toBeNull();
}

const humansWith = (email: string) => count("humans", "email = ?1", email.toLowerCase());

describe("identity-provider settings", () => {
  it("not configured: GET /v1/auth/idp and the callback answer 503 auth_provider_unavailable, status says idp: false", async () => {
    const err = await expectError(await callWith({}, "/v1/auth/idp"), 503, "auth_provider_unavailable");
    expect(err.details).toEqual({ reason: "idp_not_configured" });
    await expectError(await callWith({}, "/v1/auth/idp/callback?state=x&code=y"), 503, "auth_provider_unavailable");
    expect(await json(await callWith({}, "/v1/auth/status"), 200)).toEqual({ magic_link: true, idp: false });
    // Half a configuration is none.
    expect(await json(await callWith({ ...IDP, IDP_CLIENT_SECRET: "" }, "/v1/auth/status"), 200)).toEqual({ magic_link: true, idp: false });
  });

  it("configured: status says idp: true and keeps magic_link", async () => {
    expect(await json(await callWith(IDP, "/v1/auth/status"), 200)).toEqual({ magic_link: true, idp: true });
  });

  it("an http issuer counts only in development mode; scopes always include openid and email; the name defaults to the issuer's host", () => {
    const https = { IDP_ISSUER: "https://login.example.com", IDP_CLIENT_ID: "c", IDP_CLIENT_SECRET: "s" };
    expect(config({ RELAY_ENV: "production", ...https, IDP_ISSUER: "http://login.example.com" }).idp).toBeNull();
    expect(config({ RELAY_ENV: "production", ...https, IDP_ISSUER: "not a url" }).idp).toBeNull();
    expect(config({ RELAY_ENV: "development", ...https, IDP_ISSUER: "http://127.0.0.1:9" }).idp?.issuer).toBe("http://127.0.0.1:9");
    expect(config({ RELAY_ENV: "production", ...https })).toMatchObject({ idp: { issuer: "https://login.example.com", clientId: "c", scopes: "openid email profile", name: "login.example.com" } });
    expect(config({ RELAY_ENV: "production", ...https, IDP_SCOPES: "groups email", IDP_NAME: "Acme SSO" }).idp).toMatchObject({ scopes: "openid email groups", name: "Acme SSO" });
  });
});

describe("GET /v1/auth/idp", () => {
  it("redirects to the provider with a code request: client, callback, openid email scope, state, nonce, PKCE S256; the attempt cookie is HttpOnly, Lax and short-lived", async () => {
    const started = await start();
    const query = started.authorize.searchParams;
    expect(started.authorize.origin + started.authorize.pathname).toBe(`${issuer}/authorize`);
    expect(query.get("response_type")).toBe("code");
    expect(query.get("client_id")).toBe(FAKE_IDP_CLIENT_ID);
    expect(query.get("redirect_uri")).toBe(CALLBACK);
    expect(query.get("scope")).toBe("openid email profile");
    expect(query.get("code_challenge_method")).toBe("S256");
    expect(query.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(query.get("state")!.length).toBeGreaterThanOrEqual(32);
    expect(query.get("nonce")!.length).toBeGreaterThanOrEqual(32);
    expect(started.cookie).toBe(`relay_idp_attempt=${query.get("state")}`);
    expect(started.setCookie).toMatch(/HttpOnly/i);
    expect(started.setCookie).toMatch(/SameSite=Lax/i);
    expect(started.setCookie).toMatch(/Path=\/(;|$)/i);
    expect(started.setCookie).toMatch(/Max-Age=600/i);
    // Only the state's hash is stored.
    const stored = await env.DB.prepare("SELECT * FROM idp_sign_in_attempts").all();
    expect(JSON.stringify(stored.results)).not.toContain(query.get("state")!);
  });

  it("over https the attempt cookie is __Host- prefixed (Secure, Path=/, no Domain) and only that name is read back, so a sibling host cannot plant an attempt", async () => {
    const HTTPS = { ...IDP, API_ORIGIN: "https://relay.example.com", APPS_DOMAIN: "apps.example.com" };
    const res = await callWith(HTTPS, "/v1/auth/idp");
    expect(res.status).toBe(302);
    const setCookie = res.headers.get("set-cookie") ?? "";
    const state = new URL(res.headers.get("location")!).searchParams.get("state")!;
    expect(setCookie.startsWith(`__Host-relay_idp_attempt=${state};`)).toBe(true);
    expect(setCookie).toMatch(/;\s*Path=\/(;|$)/);
    expect(setCookie).toMatch(/;\s*Secure/);
    expect(setCookie).not.toMatch(/Domain=/i);
    const callback = `/v1/auth/idp/callback?state=${state}&code=not-a-code`;
    // A bare-named cookie (what a sibling host could plant) is not the attempt's.
    expectRefused(await callWith(HTTPS, callback, { headers: { cookie: `relay_idp_attempt=${state}` } }), "idp_state_invalid");
    // The prefixed one gets past the state check (and fails later, at the made-up code).
    const prefixed = await callWith(HTTPS, callback, { headers: { cookie: `__Host-relay_idp_attempt=${state}` } });
    expect(new URL(prefixed.headers.get("location")!, API).searchParams.get("error")).not.toBe("idp_state_invalid");
    expect(sessionFrom(prefixed)).toBeNull();
  });

  it("refuses a return_to off this relay with 400 invalid_request and starts nothing", async () => {
    for (const returnTo of ["https://evil.example/x", "//evil.example/", "/\\evil.example", "javascript:alert(1)"]) {
      const before = await count("idp_sign_in_attempts");
      const err = await expectError(await callWith(IDP, `/v1/auth/idp?return_to=${encodeURIComponent(returnTo)}`), 400, "invalid_request");
      expect(err.details).toMatchObject({ field: "return_to" });
      expect(await count("idp_sign_in_attempts")).toBe(before);
    }
  });

  it("a provider that is down (503, or nothing listening) sends the browser back to /signin?error=auth_provider_unavailable, nothing kept", async () => {
    for (const down of [brokenIssuer, "http://127.0.0.1:9"]) {
      const before = await count("idp_sign_in_attempts");
      const res = await callWith({ ...IDP, IDP_ISSUER: down }, "/v1/auth/idp?return_to=%2Fdevice");
      expectRefused(res, "auth_provider_unavailable", "/device");
      expect(res.headers.get("set-cookie") ?? "").not.toContain("relay_idp_attempt=");
      expect(await count("idp_sign_in_attempts")).toBe(before);
    }
  });
});

describe("the console's sign-in page", () => {
  it("offers 'Sign in with <name>' (keeping return_to) only when a provider is configured, and says what each failure code means", async () => {
    const page = await callWith(IDP, `/signin?return_to=${encodeURIComponent("/device?code=ABCD-EFGH")}`);
    const html = await page.text();
    expect(html).toContain(`href="/v1/auth/idp?return_to=${encodeURIComponent("/device?code=ABCD-EFGH")}"`);
    expect(html).toMatch(/id="idp-sign-in"[^>]*>Sign in with Fake IdP</);
    expect(await (await callWith({ ...IDP, IDP_NAME: "<b>Acme</b>" }, "/signin")).text()).toContain("Sign in with &lt;b&gt;Acme&lt;/b&gt;");
    expect(await (await callWith({}, "/signin")).text()).not.toContain("idp-sign-in");
    for (const code of ["idp_state_invalid", "idp_access_denied", "idp_token_invalid", "email_not_verified", "auth_provider_unavailable"]) {
      const refused = await (await callWith(IDP, `/signin?error=${code}`)).text();
      expect(refused).toMatch(new RegExp(`role="alert"[^>]*>[^<]*\\(${code}\\)`));
    }
    expect(await (await callWith(IDP, "/signin?error=not_a_code")).text()).not.toContain('role="alert"');
  });

  it("GET /v1/auth/idp shares the sign-in link's per-address limit: past it, 429 rate_limited and nothing started", async () => {
    // An address freshIp never hands out (it gives IPv4 only), so no other call shares the bucket.
    const ip = `2001:db8:1d9::${crypto.getRandomValues(new Uint16Array(1))[0].toString(16)}`;
    for (let attempt = 0; attempt < 5; attempt += 1) expect((await callWith(IDP, "/v1/auth/idp", { ip })).status).toBe(302);
    const before = await count("idp_sign_in_attempts");
    await expectError(await callWith(IDP, "/v1/auth/idp", { ip }), 429, "rate_limited");
    expect(await count("idp_sign_in_attempts")).toBe(before);
  });
});

describe("GET /v1/auth/idp/callback", () => {
  it("signs a verified address in: creates the human (verified), sets the session cookie, spends the attempt and redirects to the console", async () => {
    const email = freshEmail("idp");
    const started = await start();
    const res = await back(await atIssuer(started, { email }), started.cookie);
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/");
    const session = sessionFrom(res);
    expect(session).toMatch(/^sess_[0-9a-f]{32}$/);
    expect(res.headers.get("set-cookie")).toMatch(/relay_session=[^;]+;.*HttpOnly/i);
    const human = await env.DB.prepare("SELECT id, email_verified_at FROM humans WHERE email = ?1").bind(email).first<{ id: string; email_verified_at: string | null }>();
    expect(human?.email_verified_at).toBeTruthy();
    await json(await callWith(IDP, "/v1/self/profile", { session: session! }), 200);
    // The attempt is spent and its cookie cleared.
    expect(await count("idp_sign_in_attempts", "state_hash = ?1", await sha256Hex(started.authorize.searchParams.get("state")!))).toBe(0);
    expect(res.headers.get("set-cookie")).toMatch(/relay_idp_attempt=;/);
  });

  it("is the same human a magic link signs in, whatever the address's case, and returns to return_to", async () => {
    const magic = await signIn(freshEmail("both"));
    const started = await start("/device?code=ABCD-EFGH");
    const res = await back(await atIssuer(started, { email: magic.email.toUpperCase() }), started.cookie);
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/device?code=ABCD-EFGH");
    const session = sessionFrom(res)!;
    expect(await humansWith(magic.email)).toBe(1);
    expect(await count("sessions", "human_id = ?1 AND token_hash = ?2", magic.humanId, await sha256Hex(session))).toBe(1);
    await json(await callWith(IDP, "/v1/self/profile", { session }), 200);
  });

  it("a replayed callback (same state, same cookie) is idp_state_invalid and mints no second session", async () => {
    const email = freshEmail("replay");
    const started = await start();
    const callback = await atIssuer(started, { email });
    expect((await back(callback, started.cookie)).status).toBe(302);
    const human = await env.DB.prepare("SELECT id FROM humans WHERE email = ?1").bind(email).first<{ id: string }>();
    expectRefused(await back(callback, started.cookie), "idp_state_invalid");
    expect(await count("sessions", "human_id = ?1", human!.id)).toBe(1);
  });

  it("a state this browser did not start (no cookie, another attempt's cookie, unknown, missing, overlong) is idp_state_invalid and leaves the attempt usable", async () => {
    const email = freshEmail("state");
    const started = await start();
    const other = await start();
    const callback = await atIssuer(started, { email });
    expectRefused(await back(callback, null), "idp_state_invalid");
    expectRefused(await back(callback, other.cookie), "idp_state_invalid");
    const unknown = new URL(callback);
    unknown.searchParams.set("state", "x".repeat(43));
    expectRefused(await back(unknown, `relay_idp_attempt=${"x".repeat(43)}`), "idp_state_invalid");
    const missing = new URL(callback);
    missing.searchParams.delete("state");
    expectRefused(await back(missing, "relay_idp_attempt="), "idp_state_invalid");
    expectRefused(await back(new URL(`${CALLBACK}?state=${"y".repeat(5000)}&code=z`), `relay_idp_attempt=${"y".repeat(5000)}`), "idp_state_invalid");
    expect(await humansWith(email)).toBe(0);
    // The browser that started it still can finish it.
    expect(sessionFrom(await back(callback, started.cookie))).toMatch(/^sess_/);
  });

  it("an attempt older than ten minutes is idp_state_invalid", async () => {
    const email = freshEmail("late");
    const started = await start();
    const callback = await atIssuer(started, { email });
    await env.DB.prepare("UPDATE idp_sign_in_attempts SET expires_at = ?1 WHERE state_hash = ?2")
      .bind(new Date(Date.now() - 1000).toISOString(), await sha256Hex(started.authorize.searchParams.get("state")!)).run();
    expectRefused(await back(callback, started.cookie), "idp_state_invalid");
    expect(await humansWith(email)).toBe(0);
  });

  it("an answer with the right state but no code is idp_token_invalid", async () => {
    const started = await start();
    const callback = await atIssuer(started, { email: freshEmail("nocode") });
    callback.searchParams.delete("code");
    expectRefused(await back(callback, started.cookie), "idp_token_invalid");
  });

  it("declined at the provider: idp_access_denied, return_to kept, nobody created", async () => {
    const email = freshEmail("deny");
    const started = await start("/device");
    const callback = await atIssuer(started, { email, deny: true });
    expect(callback.searchParams.get("error")).toBe("access_denied");
    expectRefused(await back(callback, started.cookie), "idp_access_denied", "/device");
    expect(await humansWith(email)).toBe(0);
  });

  const spoiled: Record<string, string> = {
    nonce: "another attempt's nonce", issuer: "another issuer", audience: "another client as audience", expired: "an expiry in the past", signature: "a key the JWKS does not hold",
  };
  for (const [tamper, how] of Object.entries(spoiled)) {
    it(`an ID token with ${how} is idp_token_invalid: no session, nobody created`, async () => {
      const email = freshEmail(`tamper-${tamper}`);
      const started = await start();
      expectRefused(await back(await atIssuer(started, { email, tamper }), started.cookie), "idp_token_invalid");
      expect(await humansWith(email)).toBe(0);
    });
  }

  it("a code the provider does not know (forged or spent) is idp_token_invalid", async () => {
    const email = freshEmail("code");
    const started = await start();
    const callback = await atIssuer(started, { email });
    callback.searchParams.set("code", "0".repeat(32));
    expectRefused(await back(callback, started.cookie), "idp_token_invalid");
    expect(await humansWith(email)).toBe(0);
  });

  it("an address the provider did not verify, or none at all, is email_not_verified: nobody created", async () => {
    const email = freshEmail("unverified");
    const unverified = await start();
    expectRefused(await back(await atIssuer(unverified, { email, verified: false }), unverified.cookie), "email_not_verified");
    expect(await humansWith(email)).toBe(0);
    const none = await start();
    expectRefused(await back(await atIssuer(none, {}), none.cookie), "email_not_verified");
  });

  it("a provider that went down while the person was there is auth_provider_unavailable: no session", async () => {
    const email = freshEmail("down");
    const started = await start("/device");
    const callback = await atIssuer(started, { email });
    expectRefused(await back(callback, started.cookie, { ...IDP, IDP_ISSUER: brokenIssuer }), "auth_provider_unavailable", "/device");
    expect(await humansWith(email)).toBe(0);
  });
});
