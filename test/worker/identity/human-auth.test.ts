// Human sign-in (CONTRACT §3–4): request-link → development outbox → verify sets the
// session cookie and redirects; links are single-use and expire; return_to stays on the
// API origin; logout revokes the session; /__dev/mail exists in development mode only.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { API, call, callWith, count, expectError, freshEmail, json, latestLink, openLink, requestLink, sessionFrom, signIn, snapshot } from "../helpers";

describe("POST /v1/auth/request-link", () => {
  it("answers 200 { ok: true } and mails a verify link (outbox shape of CONTRACT §3)", async () => {
    const email = freshEmail();
    const res = await call("/v1/auth/request-link", { method: "POST", json: { email } });
    expect(await json(res, 200)).toEqual({ ok: true });
    const outbox = await json<{ messages: Array<Record<string, string>> }>(await call(`/__dev/mail?to=${encodeURIComponent(email)}`), 200);
    expect(Object.keys(outbox)).toEqual(["messages"]);
    expect(outbox.messages).toHaveLength(1);
    const message = outbox.messages[0];
    expect(Object.keys(message).sort()).toEqual(["created_at", "html", "id", "subject", "text", "to"]);
    expect(message.to).toBe(email);
    expect(message.text).toMatch(/http:\/\/localhost:8787\/v1\/auth\/verify\?token=ml_[0-9a-f]{32}/);
    expect(message.html).toContain("http://localhost:8787/v1/auth/verify?token=ml_");
    // The link token is stored only as its hash.
    const token = /token=(ml_[0-9a-f]{32})/.exec(message.text)![1];
    expect(JSON.stringify((await env.DB.prepare("SELECT * FROM magic_links").all()).results)).not.toContain(token.slice(3));
    // No account exists until the link is opened.
    expect(await count("humans", "email = ?1", email)).toBe(0);
  });

  it("normalises the address: mail goes to the lowercase address, the outbox query is case-insensitive", async () => {
    const email = freshEmail("MixedCase");
    await json(await call("/v1/auth/request-link", { method: "POST", json: { email: `  ${email.toUpperCase()}`.trim() } }), 200);
    const link = await latestLink(email.toUpperCase());
    const res = await openLink(link);
    expect(res.status).toBe(302);
    expect(await count("humans", "email = ?1", email.toLowerCase())).toBe(1);
  });

  it("lists the outbox newest first", async () => {
    const email = freshEmail();
    const first = await requestLink(email);
    const second = await requestLink(email);
    expect(first).not.toBe(second);
    const outbox = await json<{ messages: Array<{ text: string }> }>(await call(`/__dev/mail?to=${email}`), 200);
    expect(outbox.messages).toHaveLength(2);
    expect(outbox.messages[0].text).toContain(second);
    expect(outbox.messages[1].text).toContain(first);
  });

  const bad: Array<[string, unknown, string]> = [
    ["no email", {}, "email"],
    ["not an email", { email: "not-an-email" }, "email"],
    ["email as a number", { email: 5 }, "email"],
    ["email with a newline (header injection)", { email: "a@example.com\nBcc: b@example.com" }, "email"],
    ["email over 254 characters", { email: `${"a".repeat(250)}@example.com` }, "email"],
    ["an unknown field", { email: "a@example.com", admin: true }, "admin"],
    ["return_to off-origin", { email: "a@example.com", return_to: "https://evil.example/steal" }, "return_to"],
    ["return_to protocol-relative", { email: "a@example.com", return_to: "//evil.example/x" }, "return_to"],
    ["return_to with a backslash", { email: "a@example.com", return_to: "/\\evil.example" }, "return_to"],
    ["return_to javascript:", { email: "a@example.com", return_to: "javascript:alert(1)" }, "return_to"],
    ["return_to on the API origin but with a double slash path", { email: "a@example.com", return_to: "http://localhost:8787//evil.example/" }, "return_to"],
    ["return_to with a tab that browsers strip", { email: "a@example.com", return_to: "/\t/evil.example" }, "return_to"],
    ["return_to with a newline", { email: "a@example.com", return_to: "/ok\r\nSet-Cookie: x=y" }, "return_to"],
    ["return_to dot-segment escape", { email: "a@example.com", return_to: "/.//evil.example" }, "return_to"],
    ["return_to as a number", { email: "a@example.com", return_to: 1 }, "return_to"],
  ];
  for (const [label, body, field] of bad) {
    it(`${label} → 400 invalid_request (details.field ${field}), nothing mailed`, async () => {
      const before = await snapshot();
      const mailsBefore = await count("dev_mail");
      const err = await expectError(await call("/v1/auth/request-link", { method: "POST", json: body }), 400, "invalid_request");
      expect(err.details?.field).toBe(field);
      expect(await snapshot()).toEqual(before);
      expect(await count("dev_mail")).toBe(mailsBefore);
    });
  }
});

describe("GET /v1/auth/verify", () => {
  it("sets an HttpOnly SameSite=Lax session cookie (no Secure on http) and redirects 302 to the console", async () => {
    const email = freshEmail();
    const res = await openLink(await requestLink(email));
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/");
    const cookie = res.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^relay_session=sess_[0-9a-f]{32};/);
    expect(cookie).toMatch(/;\s*HttpOnly/i);
    expect(cookie).toMatch(/;\s*SameSite=Lax/i);
    expect(cookie).toMatch(/;\s*Path=\//i);
    expect(cookie).toMatch(/;\s*Max-Age=2592000/i);
    expect(cookie).not.toMatch(/;\s*Secure/i);
    // The first sign-in created the human, verified.
    const human = await env.DB.prepare("SELECT * FROM humans WHERE email = ?1").bind(email).first<Record<string, unknown>>();
    expect(human!.email_verified_at).toEqual(expect.any(String));
    // The session works and is stored only as a hash.
    const session = sessionFrom(res)!;
    await json(await call("/v1/self/profile", { session }), 200);
    expect(JSON.stringify((await env.DB.prepare("SELECT * FROM sessions").all()).results)).not.toContain(session.slice(5));
  });

  it("adds Secure when the API origin is https", async () => {
    const email = freshEmail();
    const link = await requestLink(email);
    const url = new URL(link);
    const res = await callWith({ API_ORIGIN: "https://relay.example.com" }, url.pathname + url.search);
    expect(res.status).toBe(302);
    expect(res.headers.get("set-cookie")).toMatch(/;\s*Secure/i);
  });

  it("redirects to return_to when it was given", async () => {
    const email = freshEmail();
    const absolute = await requestLink(email, `${API}/device?code=BCDF-GHJK`);
    const res = await openLink(absolute);
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/device?code=BCDF-GHJK");
    const relative = await requestLink(email, "/apps?x=1#top");
    expect((await openLink(relative)).headers.get("location")).toBe("/apps?x=1#top");
  });

  it("a second sign-in reuses the same human", async () => {
    const email = freshEmail();
    const a = await signIn(email);
    const b = await signIn(email);
    expect(b.humanId).toBe(a.humanId);
    expect(b.session).not.toBe(a.session);
    expect(await count("humans", "email = ?1", email)).toBe(1);
  });

  it("a link works once: reopening redirects to the sign-in page and sets no cookie", async () => {
    const link = await requestLink(freshEmail());
    expect((await openLink(link)).status).toBe(302);
    const before = await snapshot();
    const again = await openLink(link);
    expect(again.status).toBe(302);
    expect(again.headers.get("location")).toBe("/signin?error=link_invalid");
    expect(again.headers.get("set-cookie")).toBeNull();
    expect(await snapshot()).toEqual(before);
  });

  it("an expired link redirects to the sign-in page, creates no human and no session", async () => {
    const email = freshEmail();
    const link = await requestLink(email);
    await env.DB.prepare("UPDATE magic_links SET expires_at = ?1 WHERE email = ?2").bind(new Date(Date.now() - 1000).toISOString(), email).run();
    const before = await snapshot();
    const res = await openLink(link);
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/signin?error=link_invalid");
    expect(res.headers.get("set-cookie")).toBeNull();
    expect(await snapshot()).toEqual(before);
    expect(await count("humans", "email = ?1", email)).toBe(0);
  });

  it("an unknown token redirects to the sign-in page", async () => {
    const res = await call("/v1/auth/verify?token=ml_00000000000000000000000000000000");
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/signin?error=link_invalid");
    expect(res.headers.get("set-cookie")).toBeNull();
  });

  it("a missing or oversized token → 400 invalid_request (details.field token)", async () => {
    for (const path of ["/v1/auth/verify", "/v1/auth/verify?token=", `/v1/auth/verify?token=${"t".repeat(201)}`]) {
      const err = await expectError(await call(path), 400, "invalid_request");
      expect(err.details?.field).toBe("token");
    }
  });
});

describe("GET /v1/auth/status", () => {
  it("answers exactly { magic_link: true, idp: false }", async () => {
    expect(await json(await call("/v1/auth/status"), 200)).toEqual({ magic_link: true, idp: false });
  });
});

describe("POST /v1/auth/logout", () => {
  it("answers 204, clears the cookie, and the session stops working", async () => {
    const human = await signIn();
    const res = await call("/v1/auth/logout", { method: "POST", session: human.session });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    const cleared = res.headers.get("set-cookie")!;
    expect(cleared).toMatch(/^relay_session=;/);
    expect(cleared).toMatch(/Max-Age=0/i);
    await expectError(await call("/v1/self/profile", { session: human.session }), 401, "unauthorized");
    await expectError(await call("/v1/self/claim-codes", { method: "POST", session: human.session }), 401, "unauthorized");
    const row = await env.DB.prepare("SELECT revoked_at FROM sessions WHERE human_id = ?1").bind(human.humanId).first<{ revoked_at: string | null }>();
    expect(row!.revoked_at).toEqual(expect.any(String));
  });

  it("only the session logged out stops: another session of the same human keeps working", async () => {
    const email = freshEmail();
    const a = await signIn(email);
    const b = await signIn(email);
    expect((await call("/v1/auth/logout", { method: "POST", session: a.session })).status).toBe(204);
    await json(await call("/v1/self/profile", { session: b.session }), 200);
  });

  it("answers 204 without a session too", async () => {
    expect((await call("/v1/auth/logout", { method: "POST" })).status).toBe(204);
    expect((await call("/v1/auth/logout", { method: "POST", headers: { cookie: "relay_session=sess_bogus" } })).status).toBe(204);
  });

  it("a cross-site logout → 403 csrf_origin_mismatch, and the session survives", async () => {
    const human = await signIn();
    const before = await snapshot();
    await expectError(await call("/v1/auth/logout", { method: "POST", session: human.session, origin: "https://evil.example" }), 403, "csrf_origin_mismatch");
    await expectError(await call("/v1/auth/logout", { method: "POST", session: human.session, origin: null }), 403, "csrf_origin_mismatch");
    expect(await snapshot()).toEqual(before);
    await json(await call("/v1/self/profile", { session: human.session }), 200);
  });
});

describe("GET /__dev/mail", () => {
  it("is 404 not_found outside development mode", async () => {
    const email = freshEmail();
    await requestLink(email);
    const res = await callWith({ RELAY_ENV: "production" }, `/__dev/mail?to=${email}`);
    await expectError(res, 404, "not_found");
    const all = await callWith({ RELAY_ENV: "production" }, "/__dev/mail");
    await expectError(all, 404, "not_found");
  });

  it("answers an empty list for an address with no mail", async () => {
    expect(await json(await call(`/__dev/mail?to=${freshEmail("nobody")}`), 200)).toEqual({ messages: [] });
  });
});
