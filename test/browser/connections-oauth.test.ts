// An oauth2 connection's whole life in real Chromium against a real local relay and a
// fake provider on 127.0.0.1 (fake-oauth-provider.ts): the agent creates the connection
// (pending_auth); the owner opens its authorize link, signs in, lands on the provider's
// consent page with a PKCE S256 challenge and state, allows, and is sent back to
// /oauth/connections/callback, which exchanges the code and shows "Connected" (active,
// instanceBaseUrl captured). In the app, as the owner, `service.connections.status` finds
// the access token expired and refreshes it against the provider (which rotates the
// refresh token); once the provider revokes that refresh token, the next refresh flips the
// connection to needs_reauth. Every request stays on loopback.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clockPast } from "../support/wait";
import { api, ownerWithAgent, relayUrl, signInHere, useBrowser } from "./support";
import { startFakeProvider, type FakeProvider } from "./fake-oauth-provider";

const { newPage } = useBrowser();

const CLIENT_ID = "relay-test-client";
const CLIENT_SECRET = "fake-provider-client-secret-0123456789";

const MANIFEST = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  "x-service-manifest": { app: { name: "Calendar sync" }, collections: {} },
};

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Calendar sync</title></head>
<body><h1 id="content">Calendar sync settings</h1>
<script>window.service.ready.then(() => { document.body.dataset.ready = window.service.session.kind; });</script></body></html>`;

interface Connection {
  name: string;
  status: string;
  expiresAt: string | null;
  instanceBaseUrl: string | null;
  authorizeUrl?: string | null;
}

let provider: FakeProvider;

beforeAll(async () => {
  provider = await startFakeProvider({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, expiresIn: 1, instanceUrl: "https://eu.calendar.example.com" });
});

afterAll(async () => {
  await provider?.close();
});

describe("an oauth2 connection in Chromium", () => {
  it("is authorized by the owner through the provider's consent, refreshed when expired, and needs reauth once the provider revokes it", async () => {
    const { email, key } = await ownerWithAgent("oauth-owner");
    const deployed = await api<{ app_id: string; url: string }>("/v1/apps", { key, body: { html: PAGE, manifest: MANIFEST, visibility: "private" } });
    expect(deployed.status, JSON.stringify(deployed.body)).toBe(201);
    const app = deployed.body;
    const created = await api<{ connection: Connection }>(`/v1/apps/${app.app_id}/connections`, {
      key,
      body: {
        name: "calendar", kind: "oauth2", allowedHost: "*.calendar.example.com", authorizeUrl: `${provider.origin}/authorize`,
        tokenEndpoint: `${provider.origin}/token`, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, scopes: "calendar.read",
        instanceField: "instance_url",
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.connection.status).toBe("pending_auth");

    // The owner opens the authorize link (what `service connections authorize-url` prints), signs in, and consents.
    const p = await newPage([provider.origin]);
    await p.goto(`${relayUrl}/v1/apps/${app.app_id}/connections/calendar/authorize`);
    await signInHere(p, email);
    await p.locator("#consent-client", { hasText: CLIENT_ID }).waitFor();
    expect(provider.authorizations).toHaveLength(1);
    expect(provider.authorizations[0]).toMatchObject({
      response_type: "code", client_id: CLIENT_ID, redirect_uri: `${relayUrl}/oauth/connections/callback`,
      code_challenge_method: "S256", scope: "calendar.read",
    });
    await p.locator("#allow").click();
    await p.locator("#consent-outcome", { hasText: "Connected" }).waitFor();
    expect(new URL(p.url()).pathname).toBe("/oauth/connections/callback");
    expect(await p.locator("#consent-message").textContent()).toContain("calendar");
    expect(provider.tokenRequests.map((r) => r.grant_type)).toEqual(["authorization_code"]);

    const listed = await api<{ connections: Connection[] }>(`/v1/apps/${app.app_id}/connections`, { key });
    const connected = listed.body.connections[0];
    expect(connected).toMatchObject({ status: "active", instanceBaseUrl: "https://eu.calendar.example.com" });
    expect(connected.expiresAt).not.toBeNull();
    expect(JSON.stringify(listed.body)).not.toMatch(/at-\d|rt-\d/);

    // The owner opens the app (already signed in on the relay, so the gate hands over at once).
    await p.goto(app.url);
    await p.locator("#svc-sign-in").click();
    await p.locator('body[data-ready="owner"]').waitFor();
    const status = (name: string) => p.evaluate((n) => (window as unknown as { service: { connections: { status(n: string): Promise<Connection> } } }).service.connections.status(n), name);

    // The access token lived one second: once it is past, reading the status refreshes it.
    const firstRefreshToken = provider.currentRefreshToken();
    await clockPast(Date.parse(connected.expiresAt!));
    const refreshed = await status("calendar");
    expect(refreshed.status).toBe("active");
    expect(Date.parse(refreshed.expiresAt!)).toBeGreaterThan(Date.parse(connected.expiresAt!));
    expect(provider.tokenRequests.map((r) => r.grant_type)).toEqual(["authorization_code", "refresh_token"]);
    expect(provider.tokenRequests[1].refresh_token).toBe(firstRefreshToken);
    expect(JSON.stringify(refreshed)).not.toMatch(/at-\d|rt-\d/);

    // The provider revokes the (rotated) refresh token: the next refresh is refused and the connection needs reauth.
    provider.revoke(provider.currentRefreshToken()!);
    await clockPast(Date.parse(refreshed.expiresAt!));
    const revoked = await status("calendar");
    expect(revoked).toMatchObject({ status: "needs_reauth", authorizeUrl: `${relayUrl}/v1/apps/${app.app_id}/connections/calendar/authorize` });
    expect(provider.tokenRequests.map((r) => r.grant_type)).toEqual(["authorization_code", "refresh_token", "refresh_token"]);
    const after = await api<{ connections: Connection[] }>(`/v1/apps/${app.app_id}/connections`, { key });
    expect(after.body.connections[0].status).toBe("needs_reauth");
    // A needs_reauth connection is not refreshed again: reading the status asks the provider nothing.
    expect((await status("calendar")).status).toBe("needs_reauth");
    expect(provider.tokenRequests).toHaveLength(3);

    // Consenting again brings it back.
    await p.goto(revoked.authorizeUrl!);
    await p.locator("#allow").click();
    await p.locator("#consent-outcome", { hasText: "Connected" }).waitFor();
    const back = await api<{ connections: Connection[] }>(`/v1/apps/${app.app_id}/connections`, { key });
    expect(back.body.connections[0].status).toBe("active");
  });
});
