// connectionHeader, the function the webhook engine calls for each outbound request that
// names a connection: the stored header for the allowed host only (exact, or one label
// under a `*.` wildcard), nothing for any other host, a deleted or unknown connection, or
// an oauth2 connection that has no consent yet; refusals are sentences for the journal and
// never carry the secret. For an oauth2 connection holding tokens (stored here as a
// consent would store them): "<scheme> <token>" while the token has over a minute left;
// expired without a refresh token it needs reauth; a token endpoint that cannot be reached
// fails the attempt but leaves the connection active. (The refresh against a provider,
// and invalid_grant, are in test/browser/connections-oauth.test.ts.)
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { connectionHeader } from "../../../src/effects/connections";
import { getConnection, storeTokens } from "../../../src/db/connections";
import { seal, sealedPlace } from "../../../src/connections/sealing";
import { closedLoopbackUrl, HEADER_SECRET, oauthBody, setup, staticBody, type Setup } from "./fixtures";

describe("connectionHeader", () => {
  it("gives the stored header for a target on the exact allowed host, any path, port or scheme", async () => {
    const s = await setup();
    await s.create(staticBody());
    for (const url of ["https://api.example.com/hooks/1", "https://API.example.com:8443/x?y=1", "http://api.example.com/"]) {
      expect(await connectionHeader(env, s.app.app_id, "crm", url)).toEqual({ ok: true, name: "Authorization", value: HEADER_SECRET });
    }
  });

  it("gives it under a *. wildcard for exactly one label, and to no other host", async () => {
    const s = await setup();
    await s.create(staticBody({ name: "wild", allowedHost: "*.example.com", headerName: "X-Api-Key", headerValue: "wild-secret" }));
    expect(await connectionHeader(env, s.app.app_id, "wild", "https://eu.example.com/in")).toEqual({ ok: true, name: "X-Api-Key", value: "wild-secret" });
    for (const url of ["https://example.com/in", "https://a.b.example.com/in", "https://eu.example.com.evil.net/in", "https://evilexample.com/"]) {
      const refused = await connectionHeader(env, s.app.app_id, "wild", url);
      expect(refused).toEqual({ ok: false, error: expect.stringContaining("is bound to *.example.com and is never sent to") });
      expect(JSON.stringify(refused)).not.toContain("wild-secret");
    }
  });

  it("refuses a host that does not match, naming both hosts and never the secret", async () => {
    const s = await setup();
    await s.create(staticBody());
    const refused = await connectionHeader(env, s.app.app_id, "crm", "https://attacker.example.net/collect");
    expect(refused).toEqual({ ok: false, error: 'connection "crm" is bound to api.example.com and is never sent to attacker.example.net' });
    expect(await connectionHeader(env, s.app.app_id, "crm", "https://api.example.com.attacker.net/")).toMatchObject({ ok: false });
    expect(await connectionHeader(env, s.app.app_id, "crm", "not a url")).toEqual({ ok: false, error: 'connection "crm" not sent: the target is not a valid URL' });
  });

  it("refuses a deleted connection, an unknown name and another app's connection", async () => {
    const s = await setup();
    await s.create(staticBody());
    expect((await s.call("/crm", { method: "DELETE" })).status).toBe(204);
    expect(await connectionHeader(env, s.app.app_id, "crm", "https://api.example.com/")).toEqual({ ok: false, error: 'connection "crm" does not exist' });
    const other = await setup();
    await other.create(staticBody());
    expect(await connectionHeader(env, s.app.app_id, "crm", "https://api.example.com/")).toMatchObject({ ok: false });
    expect(await connectionHeader(env, other.app.app_id, "crm", "https://api.example.com/")).toMatchObject({ ok: true });
  });

  it("refuses an oauth2 connection still waiting for the owner's consent", async () => {
    const s = await setup();
    await s.create(oauthBody());
    expect(await connectionHeader(env, s.app.app_id, "calendar", "https://api.example.com/")).toEqual({
      ok: false, error: 'connection "calendar" is waiting for the owner\'s consent',
    });
  });
});

/** Stores tokens on the app's oauth2 connection `name` as a consent would: active, sealed, expiring at `expiresAt`. */
async function consented(s: Setup, name: string, expiresAt: Date, refreshToken: string | null): Promise<void> {
  const row = (await getConnection(env, s.app.app_id, name))!;
  const stored = await storeTokens(env, row.id, row.tokenGeneration, {
    status: "active",
    accessTokenSealed: await seal(env, sealedPlace(row.id, "access"), "access-token-1"),
    refreshTokenSealed: refreshToken === null ? null : await seal(env, sealedPlace(row.id, "refresh"), refreshToken),
    expiresAt: expiresAt.toISOString(),
  });
  expect(stored).toBeDefined();
}

async function statusOf(s: Setup, name: string): Promise<string | undefined> {
  return (await getConnection(env, s.app.app_id, name))?.status;
}

describe("connectionHeader for an oauth2 connection", () => {
  it("sends '<authScheme> <access token>' while the token has more than a minute left", async () => {
    const s = await setup();
    await s.create(oauthBody({ authScheme: "token", headerName: "X-Auth" }));
    await consented(s, "calendar", new Date(Date.now() + 3600_000), "refresh-1");
    expect(await connectionHeader(env, s.app.app_id, "calendar", "https://eu.example.com/v1/events")).toEqual({ ok: true, name: "X-Auth", value: "token access-token-1" });
    expect(await connectionHeader(env, s.app.app_id, "calendar", "https://other.example.net/")).toMatchObject({ ok: false });
  });

  it("needs reauth when the token expired and the provider gave no refresh token", async () => {
    const s = await setup();
    await s.create(oauthBody());
    await consented(s, "calendar", new Date(Date.now() - 1000), null);
    const refused = await connectionHeader(env, s.app.app_id, "calendar", "https://eu.example.com/");
    expect(refused).toEqual({ ok: false, error: expect.stringContaining("the owner must authorize it again") });
    expect(await statusOf(s, "calendar")).toBe("needs_reauth");
    expect(await connectionHeader(env, s.app.app_id, "calendar", "https://eu.example.com/")).toEqual({
      ok: false, error: 'connection "calendar" needs the owner to authorize it again',
    });
  });

  it("fails the attempt but stays active when the token endpoint cannot be reached", async () => {
    const s = await setup();
    await s.create(oauthBody({ tokenEndpoint: closedLoopbackUrl("/token") }));
    await consented(s, "calendar", new Date(Date.now() + 30_000), "refresh-1");
    const failed = await connectionHeader(env, s.app.app_id, "calendar", "https://eu.example.com/");
    expect(failed).toEqual({ ok: false, error: expect.stringContaining('connection "calendar": the token refresh failed') });
    expect(JSON.stringify(failed)).not.toContain("refresh-1");
    expect(await statusOf(s, "calendar")).toBe("active");
  });
});
