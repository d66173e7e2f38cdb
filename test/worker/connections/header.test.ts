// connectionHeader, the function the webhook engine calls for each outbound request that
// names a connection: the stored header for the allowed host only (exact, or one label
// under a `*.` wildcard), nothing for any other host, a deleted or unknown connection, or
// an oauth2 connection that has no consent yet; refusals are sentences for the journal and
// never carry the secret.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { connectionHeader } from "../../../src/effects/connections";
import { HEADER_SECRET, oauthBody, setup, staticBody } from "./fixtures";

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
