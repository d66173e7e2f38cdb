// The session cookie against cookie tossing (docs/security.md, browser-side): on a relay
// served over https the cookie is `__Host-relay_session` (host-only, Secure, Path=/, no
// Domain), so an app page on a sibling host under the same registrable domain cannot plant
// or shadow it, and a bare `relay_session` such a page planted opens nothing. Over plain
// http (development) the bare name stays, as every other test relies on.
import { describe, expect, it } from "vitest";
import { API, callWith, freshEmail, json, requestLink, sessionFrom } from "../helpers";

const HTTPS = { API_ORIGIN: "https://relay.example.com", APPS_DOMAIN: "apps.example.com" };

/** Signs in through the verify link on an https relay and returns the Set-Cookie it answered with. */
async function signInOverHttps(): Promise<string> {
  const link = new URL(await requestLink(freshEmail("host-prefix")));
  const res = await callWith(HTTPS, link.pathname + link.search);
  expect(res.status).toBe(302);
  return res.headers.get("set-cookie") ?? "";
}

const asCookie = (cookie: string) => ({ headers: { cookie }, origin: API });

describe("the session cookie's __Host- prefix", () => {
  it("over https the cookie is __Host- prefixed, host-only, Secure and path-wide", async () => {
    const setCookie = await signInOverHttps();
    expect(setCookie).toMatch(/^__Host-relay_session=sess_[0-9a-f]{32};/);
    expect(setCookie).toMatch(/;\s*Path=\/(;|$)/);
    expect(setCookie).toMatch(/;\s*Secure/);
    expect(setCookie).toMatch(/;\s*HttpOnly/);
    expect(setCookie).toMatch(/;\s*SameSite=Lax/);
    expect(setCookie).not.toMatch(/Domain=/i);
  });

  it("over https only the prefixed name opens a session: a bare relay_session (as a sibling host could plant) is not read", async () => {
    const token = /__Host-relay_session=([^;]+)/.exec(await signInOverHttps())![1];
    expect((await callWith(HTTPS, "/v1/self/profile", asCookie(`__Host-relay_session=${token}`))).status).toBe(200);
    const bare = await callWith(HTTPS, "/v1/self/profile", asCookie(`relay_session=${token}`));
    expect((await json<{ error: { code: string } }>(bare, 401)).error.code).toBe("unauthorized");
  });

  it("over https sign-out clears the prefixed cookie with the attributes the prefix needs", async () => {
    const token = /__Host-relay_session=([^;]+)/.exec(await signInOverHttps())![1];
    const res = await callWith(HTTPS, "/v1/auth/logout", { method: "POST", ...asCookie(`__Host-relay_session=${token}`), origin: HTTPS.API_ORIGIN });
    expect(res.status).toBe(204);
    expect(res.headers.get("set-cookie")).toMatch(/^__Host-relay_session=;.*Max-Age=0.*Path=\/.*Secure/);
  });

  it("over plain http the bare name stays", async () => {
    const link = new URL(await requestLink(freshEmail("bare-name")));
    const res = await callWith({}, link.pathname + link.search);
    expect(sessionFrom(res)).toMatch(/^sess_[0-9a-f]{32}$/);
    expect(res.headers.get("set-cookie")).not.toMatch(/__Host-|Secure/);
    expect(await json(await callWith({}, "/v1/self/profile", asCookie(`relay_session=${sessionFrom(res)}`)), 200)).toHaveProperty("email");
  });
});
