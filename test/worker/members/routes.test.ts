// The members routes of WIRE §2.5 through the real Worker: add (existing account →
// member; unknown address → mailed invitation; 503 without a mail provider), list (owner
// first, camelCase rows), set or clear custom roles (declared only, at most eight, never
// on the owner), remove (idempotent, never the owner), the roles summary, and every
// failure's exact code with nothing changed. Cross-tenant ids answer app_not_found or
// not_found and never confirm that anything exists.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, callWith, expectError, freshEmail, json, signIn } from "../helpers";
import { deploy, manifest } from "../serve/helpers";
import { EXTRA_ROLES, addMember, invite, latestMail, listMembers, member, state, team, type MemberBody } from "./fixtures";

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe("POST /v1/apps/:id/members", () => {
  it("makes an existing account a member at once (201) with the Member shape", async () => {
    const t = await team();
    const friend = await signIn();
    const res = await call(`${t.path}/members`, { key: t.key, json: { email: friend.email.toUpperCase(), role: "member", custom_roles: ["writer"] } });
    const body = await json<{ member: MemberBody }>(res, 201);
    expect(Object.keys(body)).toEqual(["member"]);
    expect(body.member).toEqual({
      humanId: friend.humanId, email: friend.email, role: "member", customRoles: ["writer"], customRole: "writer", createdAt: expect.stringMatching(ISO),
    });
    // A courtesy notice goes to the new member.
    const notice = await latestMail(friend.email);
    expect(notice.subject).toBe("You now have access to Team board");
    expect(notice.text).toContain(t.app.url);
  });

  it("answers 200 for someone who is already a member; given roles replace theirs, omitted roles keep them", async () => {
    const t = await team();
    const friend = await signIn();
    const first = await addMember(t, friend, ["writer"]);
    const again = await json<{ member: MemberBody }>(await call(`${t.path}/members`, { key: t.key, json: { email: friend.email } }), 200);
    expect(again.member).toEqual(first);
    const reroled = await json<{ member: MemberBody }>(await call(`${t.path}/members`, { key: t.key, json: { email: friend.email, custom_roles: ["viewer"] } }), 200);
    expect(reroled.member).toMatchObject({ humanId: friend.humanId, customRoles: ["viewer"], customRole: "viewer", createdAt: first.createdAt });
  });

  it("works with the owner's session too (AKO)", async () => {
    const t = await team();
    const friend = await signIn();
    const res = await call(`${t.path}/members`, { session: t.who.human.session, json: { email: friend.email } });
    expect((await json<{ member: MemberBody }>(res, 201)).member).toMatchObject({ humanId: friend.humanId, customRoles: [], customRole: null });
  });

  it("mails an invitation to an address without an account: { ok, invited, expires_at } in 7 days", async () => {
    const t = await team();
    const email = freshEmail("New.Person");
    const before = await env.DB.prepare("SELECT count(*) AS n FROM humans").first<number>("n");
    const res = await call(`${t.path}/members`, { key: t.key, json: { email: `  ${email.toUpperCase()} `.trim(), custom_roles: ["viewer"] } });
    const body = await json<{ ok: boolean; invited: string; expires_at: string }>(res, 200);
    expect(Object.keys(body).sort()).toEqual(["expires_at", "invited", "ok"]);
    expect(body.ok).toBe(true);
    expect(body.invited).toBe(email.toLowerCase());
    expect(Math.abs(Date.parse(body.expires_at) - Date.now() - 7 * 24 * 3600_000)).toBeLessThan(60_000);
    const mail = await latestMail(email.toLowerCase());
    expect(mail.subject).toBe("You are invited to Team board");
    expect(mail.text).toMatch(/http:\/\/localhost:8787\/invite\?token=inv_[0-9a-f]{32}/);
    // No account is created and nobody is a member yet; only the hash of the token is stored.
    expect(await env.DB.prepare("SELECT count(*) AS n FROM humans").first<number>("n")).toBe(before);
    expect(await listMembers(t)).toHaveLength(1);
    const row = await env.DB.prepare("SELECT token_hash, custom_roles FROM app_invites WHERE app_id = ?1").bind(t.app.app_id).first<{ token_hash: string; custom_roles: string }>();
    expect(row!.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(mail.text).not.toContain(row!.token_hash);
    expect(JSON.parse(row!.custom_roles)).toEqual(["viewer"]);
  });

  it("re-inviting refreshes: a new link and expiry, and the older link stops working", async () => {
    const t = await team();
    const first = await invite(t);
    const again = await json<{ expires_at: string }>(await call(`${t.path}/members`, { key: t.key, json: { email: first.email, custom_roles: ["writer"] } }), 200);
    expect(Date.parse(again.expires_at)).toBeGreaterThanOrEqual(Date.parse(first.expires_at));
    const rows = await env.DB.prepare("SELECT custom_roles FROM app_invites WHERE app_id = ?1").bind(t.app.app_id).all();
    expect(rows.results).toEqual([{ custom_roles: '["writer"]' }]);
    const invitee = await signIn(first.email);
    await expectError(await call("/v1/self/invites/accept", { session: invitee.session, json: { token: first.token } }), 410, "gone");
  });

  it("answers 503 auth_provider_unavailable for an invitation when the relay cannot send mail, and stores nothing", async () => {
    const t = await team();
    const email = freshEmail("nomail");
    const before = await state(t.app.app_id, email);
    for (const overrides of [{ RELAY_ENV: "production", MAIL: undefined }, { RELAY_ENV: "production", MAIL_FROM: "" }]) {
      const res = await callWith(overrides, `${t.path}/members`, { key: t.key, json: { email } });
      const e = await expectError(res, 503, "auth_provider_unavailable");
      expect(e.details).toEqual({ reason: "mail_not_configured" });
    }
    expect(await state(t.app.app_id, email)).toEqual(before);
    // An existing account needs no mail: it still becomes a member.
    const friend = await signIn();
    const res = await callWith({ RELAY_ENV: "production", MAIL: undefined }, `${t.path}/members`, { key: t.key, json: { email: friend.email } });
    expect((await json<{ member: MemberBody }>(res, 201)).member.humanId).toBe(friend.humanId);
  });

  it("refuses bad bodies with 400 invalid_request and changes nothing", async () => {
    const t = await team();
    const friend = await signIn();
    const before = await state(t.app.app_id, friend.email);
    const bad: unknown[] = [
      {}, { email: "not-an-email" }, { email: friend.email, role: "owner" }, { email: friend.email, role: "admin" },
      { email: friend.email, custom_roles: "writer" }, { email: friend.email, custom_roles: [""] }, { email: friend.email, extra: 1 },
      { email: friend.email, custom_roles: ["nope"] }, { email: friend.email, custom_roles: ["member"] }, { email: friend.email, custom_roles: ["owner"] },
      { email: friend.email, custom_roles: ["writer", "viewer", "reviewer", ...EXTRA_ROLES] }, [], null,
    ];
    for (const body of bad) {
      await expectError(await call(`${t.path}/members`, { key: t.key, json: body }), 400, "invalid_request");
    }
    expect(await state(t.app.app_id, friend.email)).toEqual(before);
  });

  it("refuses the owner's own address with 409 conflict", async () => {
    const t = await team();
    const before = await state(t.app.app_id, t.who.human.email);
    await expectError(await call(`${t.path}/members`, { key: t.key, json: { email: t.who.human.email } }), 409, "conflict");
    expect(await state(t.app.app_id, t.who.human.email)).toEqual(before);
  });
});

describe("GET /v1/apps/:id/members", () => {
  it("lists the owner first (role owner) and members oldest first", async () => {
    const t = await team();
    const a = await member(t, ["writer", "viewer"]);
    const b = await member(t);
    await invite(t); // a pending invitation is not a member
    const members = await listMembers(t);
    expect(members).toEqual([
      { humanId: t.who.human.humanId, email: t.who.human.email, role: "owner", customRoles: [], customRole: null, createdAt: expect.stringMatching(ISO) },
      { humanId: a.humanId, email: a.email, role: "member", customRoles: ["writer", "viewer"], customRole: "writer", createdAt: expect.stringMatching(ISO) },
      { humanId: b.humanId, email: b.email, role: "member", customRoles: [], customRole: null, createdAt: expect.stringMatching(ISO) },
    ]);
    // The owner's session sees the same.
    const viaSession = await json<{ members: MemberBody[] }>(await call(`${t.path}/members`, { session: t.who.human.session }), 200);
    expect(viaSession.members).toEqual(members);
  });
});

describe("PATCH /v1/apps/:id/members/:humanId", () => {
  it("sets and clears custom roles (declared only, duplicates collapse)", async () => {
    const t = await team();
    const friend = await member(t);
    const set = await json<{ member: MemberBody }>(await call(`${t.path}/members/${friend.humanId}`, {
      method: "PATCH", key: t.key, json: { custom_roles: ["reviewer", "writer", "reviewer"] },
    }), 200);
    expect(set.member).toMatchObject({ humanId: friend.humanId, email: friend.email, role: "member", customRoles: ["reviewer", "writer"], customRole: "reviewer" });
    const eight = ["writer", "viewer", "reviewer", ...EXTRA_ROLES.slice(0, 5)];
    const full = await json<{ member: MemberBody }>(await call(`${t.path}/members/${friend.humanId}`, { method: "PATCH", key: t.key, json: { custom_roles: eight } }), 200);
    expect(full.member.customRoles).toEqual(eight);
    const cleared = await json<{ member: MemberBody }>(await call(`${t.path}/members/${friend.humanId}`, { method: "PATCH", key: t.key, json: { custom_roles: [] } }), 200);
    expect(cleared.member).toMatchObject({ customRoles: [], customRole: null });
    expect((await listMembers(t))[1]).toEqual(cleared.member);
  });

  it("refuses undeclared, built-in and more than eight roles with 400, and changes nothing", async () => {
    const t = await team();
    const friend = await member(t, ["viewer"]);
    const before = await state(t.app.app_id);
    const bad: unknown[] = [
      { custom_roles: ["ghost"] }, { custom_roles: ["member"] }, { custom_roles: ["owner"] }, { custom_roles: ["anyone"] }, { custom_roles: ["agent"] },
      { custom_roles: ["creator"] }, { custom_roles: ["writer", "viewer", "reviewer", ...EXTRA_ROLES] }, {}, { custom_roles: null },
      { custom_roles: ["writer"], role: "member" }, { custom_roles: [1] },
    ];
    for (const body of bad) {
      const e = await expectError(await call(`${t.path}/members/${friend.humanId}`, { method: "PATCH", key: t.key, json: body }), 400, "invalid_request");
      expect(typeof e.details?.field).toBe("string");
    }
    const nine = await expectError(await call(`${t.path}/members/${friend.humanId}`, {
      method: "PATCH", key: t.key, json: { custom_roles: ["writer", "viewer", "reviewer", ...EXTRA_ROLES.slice(0, 6)] },
    }), 400, "invalid_request");
    expect(nine.details).toMatchObject({ field: "custom_roles", limit: 8 });
    const undeclared = await expectError(await call(`${t.path}/members/${friend.humanId}`, { method: "PATCH", key: t.key, json: { custom_roles: ["ghost"] } }), 400, "invalid_request");
    expect(undeclared.details).toMatchObject({ field: "custom_roles", role: "ghost" });
    expect(await state(t.app.app_id)).toEqual(before);
  });

  it("an app without declared roles accepts only []", async () => {
    const t = await team("private", manifest());
    const friend = await member(t);
    await expectError(await call(`${t.path}/members/${friend.humanId}`, { method: "PATCH", key: t.key, json: { custom_roles: ["writer"] } }), 400, "invalid_request");
    await json(await call(`${t.path}/members/${friend.humanId}`, { method: "PATCH", key: t.key, json: { custom_roles: [] } }), 200);
  });

  it("refuses to re-role the owner (409) and answers not_found for someone who is not a member", async () => {
    const t = await team();
    const stranger = await signIn();
    const before = await state(t.app.app_id);
    await expectError(await call(`${t.path}/members/${t.who.human.humanId}`, { method: "PATCH", key: t.key, json: { custom_roles: ["writer"] } }), 409, "conflict");
    await expectError(await call(`${t.path}/members/${t.who.human.humanId}`, { method: "PATCH", key: t.key, json: { custom_roles: [] } }), 409, "conflict");
    await expectError(await call(`${t.path}/members/${stranger.humanId}`, { method: "PATCH", key: t.key, json: { custom_roles: ["writer"] } }), 404, "not_found");
    await expectError(await call(`${t.path}/members/h-nobody`, { method: "PATCH", key: t.key, json: { custom_roles: [] } }), 404, "not_found");
    expect(await state(t.app.app_id)).toEqual(before);
  });
});

describe("DELETE /v1/apps/:id/members/:humanId", () => {
  it("removes a member (204), and again (idempotent), and for a stranger", async () => {
    const t = await team();
    const friend = await member(t, ["writer"]);
    const stay = await member(t);
    for (let i = 0; i < 2; i++) {
      const res = await call(`${t.path}/members/${friend.humanId}`, { method: "DELETE", key: t.key });
      expect(res.status).toBe(204);
      expect(await res.text()).toBe("");
    }
    expect((await listMembers(t)).map((m) => m.humanId)).toEqual([t.who.human.humanId, stay.humanId]);
    const stranger = await signIn();
    expect((await call(`${t.path}/members/${stranger.humanId}`, { method: "DELETE", key: t.key })).status).toBe(204);
    expect((await call(`${t.path}/members/whatever`, { method: "DELETE", session: t.who.human.session })).status).toBe(204);
  });

  it("refuses to remove the owner with 409 conflict", async () => {
    const t = await team();
    await member(t);
    const before = await state(t.app.app_id);
    await expectError(await call(`${t.path}/members/${t.who.human.humanId}`, { method: "DELETE", key: t.key }), 409, "conflict");
    expect(await state(t.app.app_id)).toEqual(before);
    expect((await listMembers(t))[0]).toMatchObject({ role: "owner" });
  });
});

describe("GET /v1/apps/:id/roles", () => {
  it("lists every declared role with per-collection access computed by the permission engine", async () => {
    const t = await team();
    await member(t, ["writer"]);
    await member(t, ["writer", "reviewer"]);
    await member(t);
    const body = await json<{ roles: Array<Record<string, unknown>> }>(await call(`${t.path}/roles`, { key: t.key }), 200);
    expect(Object.keys(body)).toEqual(["roles"]);
    expect(body.roles.map((r) => r.name)).toEqual(["writer", "viewer", "reviewer", ...EXTRA_ROLES]);
    const byName = Object.fromEntries(body.roles.map((r) => [r.name as string, r]));
    expect(byName.writer).toEqual({
      name: "writer", label: "Writer", description: "Adds notes and edits their own",
      collections: [
        { name: "notes", append_only: false,
          member_access: { read: "all", create: "all", update: "own", delete: "none" },
          grant_access: { read: "none", create: "all", update: "own", delete: "none" } },
        { name: "log", append_only: true,
          member_access: { read: "none", create: "all", update: "none", delete: "none" },
          grant_access: { read: "none", create: "none", update: "none", delete: "none" } },
      ],
      member_count: 2, active_grant_count: 0,
    });
    // reviewer includes viewer, so it reads the log; a grant holder is not a member.
    expect(byName.reviewer).toMatchObject({
      label: "Reviewer", description: "Reads the log", member_count: 1,
      collections: [
        { name: "notes", member_access: { read: "all", create: "none", update: "none", delete: "none" }, grant_access: { read: "none", create: "none", update: "none", delete: "none" } },
        { name: "log", member_access: { read: "all", create: "all", update: "none", delete: "none" }, grant_access: { read: "all", create: "none", update: "none", delete: "none" } },
      ],
    });
    expect(byName.viewer).toMatchObject({ description: null, member_count: 0 });
    expect(byName.r1).toMatchObject({ label: "R1", member_count: 0, active_grant_count: 0 });
  });

  it("counts live grant links per role", async () => {
    const t = await team();
    const minted = await json<{ id: string }>(await call(`${t.path}/grants`, { key: t.key, json: { role: "writer" } }), 201);
    await json(await call(`${t.path}/grants`, { key: t.key, json: { role: "writer", mode: "once" } }), 201);
    await json(await call(`${t.path}/grants`, { key: t.key, json: { role: "viewer" } }), 201);
    const counts = async () => Object.fromEntries((await json<{ roles: Array<{ name: string; active_grant_count: number }> }>(
      await call(`${t.path}/roles`, { key: t.key }), 200)).roles.map((r) => [r.name, r.active_grant_count]));
    expect(await counts()).toMatchObject({ writer: 2, viewer: 1, reviewer: 0 });
    expect((await call(`${t.path}/grants/${minted.id}`, { method: "DELETE", key: t.key })).status).toBeLessThan(300);
    expect(await counts()).toMatchObject({ writer: 1, viewer: 1 });
  });

  it("is an empty list when the manifest declares no roles", async () => {
    const t = await team("private", manifest());
    expect(await json(await call(`${t.path}/roles`, { session: t.who.human.session }), 200)).toEqual({ roles: [] });
  });
});

describe("who may call the members routes", () => {
  it("cross-tenant: another owner's app is app_not_found on every route, and nothing changes", async () => {
    const t = await team();
    const friend = await member(t, ["writer"]);
    const other = await team();
    const before = await state(t.app.app_id, friend.email);
    const routes: Array<[string, string, unknown?]> = [
      ["GET", `${t.path}/members`], ["POST", `${t.path}/members`, { email: freshEmail() }],
      ["PATCH", `${t.path}/members/${friend.humanId}`, { custom_roles: [] }], ["DELETE", `${t.path}/members/${friend.humanId}`],
      ["GET", `${t.path}/roles`],
      ["GET", `/v1/apps/${t.app.slug}/members`], ["GET", "/v1/apps/a000000000000000000000/members"],
    ];
    for (const [method, path, body] of routes) {
      for (const auth of [{ key: other.key }, { session: other.who.human.session }]) {
        await expectError(await call(path, { method, json: body, ...auth }), 404, "app_not_found");
      }
    }
    // A member's own session cannot manage the app either: to them it is not an owned app.
    await expectError(await call(`${t.path}/members`, { session: friend.session }), 404, "app_not_found");
    await expectError(await call(`${t.path}/members/${friend.humanId}`, { method: "DELETE", session: friend.session }), 404, "app_not_found");
    expect(await state(t.app.app_id, friend.email)).toEqual(before);
    // The other owner's own app knows nothing of this member: not_found, as for anyone.
    await expectError(await call(`${other.path}/members/${friend.humanId}`, { method: "PATCH", key: other.key, json: { custom_roles: [] } }), 404, "not_found");
  });

  it("needs a credential (401), refuses a cookie from another origin (403), and the slug works like the id", async () => {
    const t = await team();
    await expectError(await call(`${t.path}/members`), 401, "unauthorized");
    await expectError(await call(`${t.path}/members`, { json: { email: freshEmail() } }), 401, "unauthorized");
    await expectError(await call(`${t.path}/members`, { session: t.who.human.session, origin: "https://evil.example", json: { email: freshEmail() } }), 403, "csrf_origin_mismatch");
    const bySlug = await json<{ members: MemberBody[] }>(await call(`/v1/apps/${t.app.slug}/members`, { key: t.key }), 200);
    expect(bySlug.members[0].role).toBe("owner");
  });

  it("a deleted app answers 410 soft_deleted; wrong verbs 405", async () => {
    const t = await team();
    const friend = await member(t);
    await json(await call(t.path, { method: "DELETE", key: t.key }), 200);
    for (const [method, path] of [["GET", `${t.path}/members`], ["GET", `${t.path}/roles`], ["DELETE", `${t.path}/members/${friend.humanId}`]]) {
      await expectError(await call(path, { method, key: t.key }), 410, "soft_deleted");
    }
    const res = await call(`${t.path}/roles`, { method: "POST", key: t.key, json: {} });
    const e = await expectError(res, 405, "method_not_allowed");
    expect(e.details).toMatchObject({ allow: ["GET", "HEAD"] });
  });

  it("purging an app removes its memberships and invitations", async () => {
    const t = await team();
    await member(t, ["writer"]);
    await invite(t);
    await json(await call(t.path, { method: "DELETE", key: t.key }), 200);
    await json(await call(`${t.path}/purge`, { method: "POST", key: t.key, json: {} }), 200);
    const left = await state(t.app.app_id);
    expect(left.members).toEqual([]);
    expect(left.invites).toEqual([]);
  });

  it("an app deployed as public also has members", async () => {
    const who = await team();
    const pub = await deploy(who.who, { visibility: "public" });
    const friend = await signIn();
    const res = await call(`/v1/apps/${pub.app_id}/members`, { key: who.key, json: { email: friend.email } });
    expect((await json<{ member: MemberBody }>(res, 201)).member.role).toBe("member");
  });
});
