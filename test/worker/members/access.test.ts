// Members on the app's own origin: a member signs in to a private (or link, or public)
// app through /authorize and POST /_svc/session and gets an app session of kind
// "member"; /_svc/session reports it and the gated document opens. The access decision
// carries their custom roles and follows role changes at once. Removing the member
// refuses their very next request, drops grants they have not traded yet, and adding
// them back does not revive the sessions they had before.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectError, json, signIn, type SignedIn } from "../helpers";
import { appCall, grantFor, type SessionAnswer } from "../serve/helpers";
import { appAccessFor } from "../../../src/auth/app-access";
import { findAppBySlug } from "../../../src/db/apps";
import { member, team } from "./fixtures";
import { clockPast } from "../../support/wait";

async function memberToken(human: SignedIn, slug: string): Promise<SessionAnswer> {
  const grant = await grantFor(human, slug);
  return json<SessionAnswer>(await appCall(slug, "/_svc/session", { json: { grant } }), 200);
}

describe("a member on the app origin", () => {
  it("signs in to a private app through /authorize and gets a member session", async () => {
    const t = await team();
    const friend = await member(t, ["writer"]);
    const answer = await memberToken(friend, t.app.slug);
    expect(answer.token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(answer.session).toMatchObject({ kind: "member", humanId: friend.humanId, visitorId: null, displayName: friend.email.split("@")[0] });

    const session = await json<Record<string, unknown>>(await appCall(t.app.slug, "/_svc/session", { token: answer.token }), 200);
    expect(session).toMatchObject({ kind: "member", humanId: friend.humanId, app: { slug: t.app.slug, name: "Team board", visibility: "private" } });

    const doc = await appCall(t.app.slug, "/", { token: answer.token });
    expect(doc.status).toBe(200);
    expect(await doc.text()).toContain("Secret page body");

    // The owner is still the owner.
    const owner = await memberToken(t.who.human, t.app.slug);
    expect(owner.session.kind).toBe("owner");
  });

  it("a non-member gets the 403 page at /authorize and no grant", async () => {
    const t = await team();
    const stranger = await signIn();
    const res = await call(`/authorize?app=${t.app.slug}`, { session: stranger.session });
    expect(res.status).toBe(403);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM app_session_grants WHERE human_id = ?1").bind(stranger.humanId).first("n")).toBe(0);
  });

  it("members of link and public apps sign in as members too", async () => {
    for (const visibility of ["link", "public"]) {
      const t = await team(visibility);
      const friend = await member(t);
      const answer = await memberToken(friend, t.app.slug);
      expect(answer.session.kind).toBe("member");
      const doc = await appCall(t.app.slug, "/", { token: answer.token });
      expect(doc.status, visibility).toBe(200);
      expect(await doc.text()).toContain("Secret page body");
    }
  });

  it("the access decision carries the member's custom roles and follows changes at once", async () => {
    const t = await team();
    const friend = await member(t, ["writer"]);
    const app = (await findAppBySlug(env, t.app.slug))!;
    expect(await appAccessFor(env, app, friend.humanId)).toEqual({ kind: "member", roles: ["writer"] });
    expect(await appAccessFor(env, app, t.who.human.humanId)).toEqual({ kind: "owner" });
    expect(await appAccessFor(env, app, (await signIn()).humanId)).toBeNull();

    const { token } = await memberToken(friend, t.app.slug);
    await json(await call(`${t.path}/members/${friend.humanId}`, { method: "PATCH", key: t.key, json: { custom_roles: ["viewer", "reviewer"] } }), 200);
    expect(await appAccessFor(env, app, friend.humanId)).toEqual({ kind: "member", roles: ["viewer", "reviewer"] });
    // Changing roles does not sign anyone out.
    expect((await appCall(t.app.slug, "/_svc/session", { token })).status).toBe(200);
    // A deleted app gives nobody access.
    expect(await appAccessFor(env, { ...app, status: "deleted" }, friend.humanId)).toBeNull();
  });

  it("removal refuses the member's next request at once, and unused grants die with it", async () => {
    const t = await team();
    const friend = await member(t);
    const { token } = await memberToken(friend, t.app.slug);
    const pendingGrant = await grantFor(friend, t.app.slug);
    expect((await appCall(t.app.slug, "/_svc/session", { token })).status).toBe(200);

    expect((await call(`${t.path}/members/${friend.humanId}`, { method: "DELETE", key: t.key })).status).toBe(204);

    await expectError(await appCall(t.app.slug, "/_svc/session", { token }), 401, "unauthorized");
    const doc = await appCall(t.app.slug, "/", { token });
    expect(doc.status).toBe(401);
    expect(await doc.text()).not.toContain("Secret page body");
    await expectError(await appCall(t.app.slug, "/_svc/session", { json: { grant: pendingGrant } }), 401, "grant_invalid");
    expect((await call(`/authorize?app=${t.app.slug}`, { session: friend.session })).status).toBe(403);
  });

  it("a grant minted before removal cannot be traded after it", async () => {
    const t = await team();
    const friend = await member(t);
    const grant = await grantFor(friend, t.app.slug);
    // Put the grant back as if removal had raced with the hand-off: the access check still refuses.
    const row = await env.DB.prepare("SELECT * FROM app_session_grants WHERE human_id = ?1").bind(friend.humanId).first<Record<string, string>>();
    await call(`${t.path}/members/${friend.humanId}`, { method: "DELETE", key: t.key });
    await env.DB.prepare("INSERT INTO app_session_grants (grant_hash, app_id, human_id, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)")
      .bind(row!.grant_hash, row!.app_id, row!.human_id, row!.created_at, row!.expires_at).run();
    await expectError(await appCall(t.app.slug, "/_svc/session", { json: { grant } }), 403, "forbidden");
  });

  it("adding a removed member back does not revive their old sessions; a new sign-in works", async () => {
    const t = await team();
    const friend = await member(t);
    const { token: old } = await memberToken(friend, t.app.slug);
    await call(`${t.path}/members/${friend.humanId}`, { method: "DELETE", key: t.key });
    // Token issue times are whole seconds: step past the second the old token was issued in.
    await clockPast(Date.now(), 1000);
    await json(await call(`${t.path}/members`, { key: t.key, json: { email: friend.email } }), 201);
    await expectError(await appCall(t.app.slug, "/_svc/session", { token: old }), 401, "unauthorized");
    const { token: fresh } = await memberToken(friend, t.app.slug);
    expect((await json<Record<string, unknown>>(await appCall(t.app.slug, "/_svc/session", { token: fresh }), 200)).kind).toBe("member");
  });

  it("the member's roles decide what the page's data door lets them do", async () => {
    const t = await team();
    const seeded = await call(`${t.path}/collections/log`, { key: t.key, json: { data: { line: "boot" } } });
    expect(seeded.status).toBeLessThan(300);
    const friend = await member(t);
    const { token } = await memberToken(friend, t.app.slug);
    // A plain member: reads notes (read: member), cannot create (write: writer), cannot read the log (read: viewer).
    expect((await json<{ rows: unknown[] }>(await appCall(t.app.slug, "/_svc/c/notes", { token }), 200)).rows).toEqual([]);
    await expectError(await appCall(t.app.slug, "/_svc/c/notes", { token, json: { data: { text: "hi" } } }), 403, "collection_write_forbidden");
    await expectError(await appCall(t.app.slug, "/_svc/c/log", { token }), 403, "collection_read_forbidden");
    // Given writer and reviewer (which includes viewer), the same session may do both at once.
    await json(await call(`${t.path}/members/${friend.humanId}`, { method: "PATCH", key: t.key, json: { custom_roles: ["writer", "reviewer"] } }), 200);
    const created = await json<{ row: { author: { kind: string; id: string } } }>(await appCall(t.app.slug, "/_svc/c/notes", { token, json: { data: { text: "hi" } } }), 201);
    expect(created.row.author).toEqual({ kind: "human", id: friend.humanId });
    expect((await json<{ rows: unknown[] }>(await appCall(t.app.slug, "/_svc/c/log", { token }), 200)).rows).toHaveLength(1);
    // Removed: refused outright.
    await call(`${t.path}/members/${friend.humanId}`, { method: "DELETE", key: t.key });
    await expectError(await appCall(t.app.slug, "/_svc/c/notes", { token }), 401, "unauthorized");
  });

  it("a service credential cannot manage members", async () => {
    const t = await team();
    const minted = await json<{ token: string }>(await call(`${t.path}/credentials`, { key: t.key, json: { mode: "following" } }), 201);
    await expectError(await call(`${t.path}/members`, { key: minted.token }), 401, "unauthorized");
    await expectError(await call(`${t.path}/members`, { key: minted.token, json: { email: "x@example.com" } }), 401, "unauthorized");
    await expectError(await call(`${t.path}/roles`, { key: minted.token }), 401, "unauthorized");
  });

  it("a member session opens only its own app", async () => {
    const t = await team();
    const other = await team();
    const friend = await member(t);
    const { token } = await memberToken(friend, t.app.slug);
    await expectError(await appCall(other.app.slug, "/_svc/session", { token }), 401, "unauthorized");
  });
});
