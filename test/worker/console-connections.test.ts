// The owner console's app page lists the app's connections (WIRE §2.6 fields the owner
// needs: name, kind, status, the allowed host, the secret's fingerprint — never a secret)
// with an authorize link for an oauth2 connection waiting for consent or needing it
// again, and none for an active or static one. The link is the consent route itself: the
// owner's session following it is sent to the provider.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call } from "./helpers";
import { getConnection, storeTokens } from "../../src/db/connections";
import { CLIENT_SECRET, HEADER_SECRET, oauthBody, setup, staticBody } from "./connections/fixtures";

interface Listed { name: string; kind: string; status: string; allowedHost: string; fingerprint: string; authorize: string | null }

const decode = (text: string) => text.replace(/&amp;/g, "&").replace(/<[^>]+>/g, "").trim();

function listed(html: string): Listed[] {
  return [...html.matchAll(/<tr data-connection="([^"]+)">([\s\S]*?)<\/tr>/g)].map(([, name, row]) => {
    const field = (f: string) => decode(new RegExp(`data-field="${f}">([\\s\\S]*?)</td>`).exec(row)?.[1] ?? "");
    const link = /<a href="([^"]+)" data-authorize=/.exec(row)?.[1] ?? null;
    return { name, kind: field("kind"), status: field("status").replace(/\s*Authorize.*$/, ""), allowedHost: field("allowed-host"), fingerprint: field("fingerprint"), authorize: link && decode(link) };
  });
}

async function consolePage(appId: string, session: string): Promise<string> {
  const res = await call(`/console/apps/${appId}`, { session });
  const html = await res.text();
  expect(res.status, html).toBe(200);
  return html;
}

describe("the console's connections section", () => {
  it("lists each connection and links oauth2 ones waiting for consent to the consent route", async () => {
    const s = await setup();
    const session = s.who.human.session;
    expect(await consolePage(s.app.app_id, session)).toContain('id="no-connections"');

    const crm = await s.create(staticBody({ name: "crm", allowedHost: "api.example.com" }));
    const calendar = await s.create(oauthBody({ name: "calendar" }));
    const html = await consolePage(s.app.app_id, session);
    expect(html).not.toContain(HEADER_SECRET);
    expect(html).not.toContain(CLIENT_SECRET);
    const authorize = `http://localhost:8787/v1/apps/${s.app.app_id}/connections/calendar/authorize`;
    expect(listed(html).sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { name: "calendar", kind: "oauth2", status: "waiting for your consent", allowedHost: "*.example.com", fingerprint: calendar.secretFingerprint, authorize },
      { name: "crm", kind: "static", status: "active", allowedHost: "api.example.com", fingerprint: crm.secretFingerprint, authorize: null },
    ]);

    // The link is the consent route: the owner's session is sent on to the provider.
    const consent = await call(new URL(authorize).pathname, { session });
    expect(consent.status).toBe(302);
    expect(new URL(consent.headers.get("location")!).origin).toBe("https://auth.example.com");

    // Active: no link; a refused refresh (needs_reauth): the link again.
    const row = (await getConnection(env, s.app.app_id, "calendar"))!;
    const active = (await storeTokens(env, row.id, row.tokenGeneration, { status: "active" }))!;
    expect(listed(await consolePage(s.app.app_id, session)).find((c) => c.name === "calendar")).toMatchObject({ status: "active", authorize: null });
    await storeTokens(env, active.id, active.tokenGeneration, { status: "needs_reauth" });
    expect(listed(await consolePage(s.app.app_id, session)).find((c) => c.name === "calendar")).toMatchObject({ status: "needs your consent again", authorize });
  });
});
