// The page script's connections.set and connections.status on the app origin
// (/_svc/connections/<name>): the owner's app session and the owner's agent key may set
// (create 201, replace 200 with new secrets) and read a connection; a member, an anonymous
// visitor and another site's page may not; bad settings are connection_invalid; answers
// carry the Connection and, for oauth2, where the owner gives consent, never a secret.
import { describe, expect, it } from "vitest";
import { call, expectError, json } from "../helpers";
import { appCall, ownerToken } from "../serve/helpers";
import { member, team } from "../members/fixtures";
import { CLIENT_SECRET, HEADER_SECRET, oauthBody, sha256Prefix, staticBody, storedRows, type ConnectionBody } from "./fixtures";

type Answer = { connection: ConnectionBody; authorizeUrl: string | null };

function settings(body: Record<string, unknown>): Record<string, unknown> {
  const { name: _name, ...rest } = body;
  return rest;
}

describe("/_svc/connections/<name>", () => {
  it("lets the owner's app session create, read and replace a static connection, never answering the secret", async () => {
    const t = await team("private");
    const token = await ownerToken(t.who.human, t.app.slug);
    const created = await appCall(t.app.slug, "/_svc/connections/crm", { method: "PUT", token, json: settings(staticBody()) });
    const createdText = await created.clone().text();
    const first = await json<Answer>(created, 201);
    expect(created.headers.get("cache-control")).toBe("no-store");
    expect(first).toEqual({
      connection: expect.objectContaining({ name: "crm", kind: "static", status: "active", allowedHost: "api.example.com", secretFingerprint: await sha256Prefix(HEADER_SECRET) }),
      authorizeUrl: null,
    });
    expect(createdText).not.toContain("sk_live");

    const read = await json<Answer>(await appCall(t.app.slug, "/_svc/connections/crm", { token }), 200);
    expect(read).toEqual(first);

    const replaced = await json<Answer>(await appCall(t.app.slug, "/_svc/connections/crm", {
      method: "PUT", token, json: settings(staticBody({ headerValue: "a-new-secret", allowedHost: "*.example.org" })),
    }), 200);
    expect(replaced.connection).toMatchObject({ id: first.connection.id, createdAt: first.connection.createdAt, allowedHost: "*.example.org", secretFingerprint: await sha256Prefix("a-new-secret") });
    expect((await storedRows(t.app.app_id))).toHaveLength(1);
    // The agent API sees the same connection.
    const listed = await json<{ connections: ConnectionBody[] }>(await call(`${t.path}/connections`, { key: t.key }), 200);
    expect(listed.connections).toEqual([replaced.connection]);
  });

  it("lets the owner's agent key do the same, and answers an oauth2 connection with its consent URL", async () => {
    const t = await team("private");
    const res = await appCall(t.app.slug, "/_svc/connections/calendar", { method: "PUT", headers: { authorization: `Bearer ${t.key}` }, json: settings(oauthBody()) });
    const text = await res.clone().text();
    const body = await json<Answer>(res, 201);
    expect(body.connection).toMatchObject({ name: "calendar", kind: "oauth2", status: "pending_auth" });
    expect(body.authorizeUrl).toBe(`http://localhost:8787/v1/apps/${t.app.app_id}/connections/calendar/authorize`);
    expect(text).not.toContain(CLIENT_SECRET);
    const status = await json<Answer>(await appCall(t.app.slug, "/_svc/connections/calendar", { headers: { authorization: `Bearer ${t.key}` } }), 200);
    expect(status.connection.status).toBe("pending_auth");
  });

  it("refuses a member's app session and an anonymous visitor with connection_status_forbidden, changing nothing", async () => {
    const t = await team("public");
    const owner = await ownerToken(t.who.human, t.app.slug);
    await json(await appCall(t.app.slug, "/_svc/connections/crm", { method: "PUT", token: owner, json: settings(staticBody()) }), 201);
    const before = await storedRows(t.app.app_id);
    const friend = await member(t);
    const memberToken = await ownerToken(friend, t.app.slug);
    await expectError(await appCall(t.app.slug, "/_svc/connections/crm", { token: memberToken }), 403, "connection_status_forbidden");
    await expectError(await appCall(t.app.slug, "/_svc/connections/crm", { method: "PUT", token: memberToken, json: settings(staticBody({ headerValue: "stolen" })) }), 403, "connection_status_forbidden");
    await expectError(await appCall(t.app.slug, "/_svc/connections/crm"), 403, "connection_status_forbidden");
    await expectError(await appCall(t.app.slug, "/_svc/connections/crm", { method: "PUT", json: settings(staticBody()) }), 403, "connection_status_forbidden");
    expect(await storedRows(t.app.app_id)).toEqual(before);
  });

  it("refuses another site's page, bad settings and an unknown name with their codes", async () => {
    const t = await team("private");
    const token = await ownerToken(t.who.human, t.app.slug);
    await expectError(await appCall(t.app.slug, "/_svc/connections/crm", { token, headers: { origin: "https://evil.example.net" } }), 403, "forbidden");
    const host = await expectError(await appCall(t.app.slug, "/_svc/connections/crm", { method: "PUT", token, json: settings(staticBody({ allowedHost: "https://x.example.com" })) }), 400, "connection_invalid");
    expect(host.details?.field).toBe("allowedHost");
    const name = await expectError(await appCall(t.app.slug, "/_svc/connections/Bad%20Name", { method: "PUT", token, json: settings(staticBody()) }), 400, "connection_invalid");
    expect(name.details?.field).toBe("name");
    const stray = await expectError(await appCall(t.app.slug, "/_svc/connections/crm", { method: "PUT", token, json: staticBody() }), 400, "connection_invalid");
    expect(stray.details?.field).toBe("name");
    await expectError(await appCall(t.app.slug, "/_svc/connections/nope", { token }), 404, "connection_not_found");
    await expectError(await appCall(t.app.slug, "/_svc/connections/crm", { method: "DELETE", token }), 405, "method_not_allowed");
    expect(await storedRows(t.app.app_id)).toEqual([]);
  });
});
