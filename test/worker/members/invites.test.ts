// The invitation lifecycle: an owner invites an address with no account; the mailed
// link opens /invite, which (signed out) mails a sign-in link back to the same page;
// signed in as the invited address the person accepts and becomes a member with the
// invited roles, and is sent through /authorize into the app. Refusals: a spent link
// (replay), an expired one, a refreshed one, a withdrawn one, a deleted app (410 gone),
// and someone signed in with another address (403, and the invitation stays usable).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectError, freshEmail, json, latestLink, openLink, sessionFrom, signIn } from "../helpers";
import { invite, inviteLink, listMembers, state, team, type MemberBody } from "./fixtures";

function form(fields: Record<string, string>): { body: string; contentType: string } {
  return { body: new URLSearchParams(fields).toString(), contentType: "application/x-www-form-urlencoded" };
}

function accept(session: string, token: string): Promise<Response> {
  return call("/v1/self/invites/accept", { session, json: { token } });
}

describe("accepting an invitation (API)", () => {
  it("makes the invited address a member with the invited roles, once", async () => {
    const t = await team();
    const inv = await invite(t, ["writer"]);
    const invitee = await signIn(inv.email);
    const body = await json<{ app_id: string; slug: string; url: string; member: MemberBody }>(await accept(invitee.session, inv.token), 200);
    expect(body).toEqual({
      app_id: t.app.app_id, slug: t.app.slug, url: t.app.url,
      member: { humanId: invitee.humanId, email: inv.email, role: "member", customRoles: ["writer"], customRole: "writer", createdAt: expect.any(String) },
    });
    expect((await listMembers(t)).map((m) => m.humanId)).toEqual([t.who.human.humanId, invitee.humanId]);
    const row = await env.DB.prepare("SELECT used_at, accepted_human_id FROM app_invites WHERE app_id = ?1").bind(t.app.app_id).first<{ used_at: string; accepted_human_id: string }>();
    expect(row).toMatchObject({ accepted_human_id: invitee.humanId, used_at: expect.any(String) });

    // Replay: the token works once.
    const before = await state(t.app.app_id);
    await expectError(await accept(invitee.session, inv.token), 410, "gone");
    expect(await state(t.app.app_id)).toEqual(before);
  });

  it("an expired invitation is 410 gone and changes nothing", async () => {
    const t = await team();
    const inv = await invite(t);
    await env.DB.prepare("UPDATE app_invites SET expires_at = ?1 WHERE app_id = ?2").bind(new Date(Date.now() - 1000).toISOString(), t.app.app_id).run();
    const invitee = await signIn(inv.email);
    const before = await state(t.app.app_id);
    await expectError(await accept(invitee.session, inv.token), 410, "gone");
    expect(await state(t.app.app_id)).toEqual(before);
    expect(await listMembers(t)).toHaveLength(1);
  });

  it("someone signed in with another address is refused (403) and the invitation stays usable", async () => {
    const t = await team();
    const inv = await invite(t);
    const other = await signIn();
    const before = await state(t.app.app_id);
    const e = await expectError(await accept(other.session, inv.token), 403, "forbidden");
    expect(e.details).toEqual({ reason: "invite_email_mismatch" });
    expect(await state(t.app.app_id)).toEqual(before);
    // The owner cannot take it either.
    await expectError(await accept(t.who.human.session, inv.token), 403, "forbidden");
    const invitee = await signIn(inv.email.toUpperCase());
    await json(await accept(invitee.session, inv.token), 200);
  });

  it("unknown, malformed, withdrawn tokens and deleted apps are 410 gone; no session is 401; a cross-site post is 403", async () => {
    const t = await team();
    const human = await signIn();
    for (const token of ["inv_" + "0".repeat(32), "nope", "inv_XYZ"]) await expectError(await accept(human.session, token), 410, "gone");
    await expectError(await call("/v1/self/invites/accept", { session: human.session, json: {} }), 400, "invalid_request");

    const inv = await invite(t);
    await expectError(await call("/v1/self/invites/accept", { json: { token: inv.token } }), 401, "unauthorized");
    const invitee = await signIn(inv.email);
    await expectError(await call("/v1/self/invites/accept", { session: invitee.session, origin: "https://evil.example", json: { token: inv.token } }), 403, "csrf_origin_mismatch");

    // Withdrawn from the console.
    const cancelled = await call(`/console/apps/${t.app.app_id}/invites/cancel`, { method: "POST", session: t.who.human.session, ...form({ email: inv.email }) });
    expect(cancelled.status).toBe(303);
    await expectError(await accept(invitee.session, inv.token), 410, "gone");

    // The app went to the trash after the invitation was sent.
    const inv2 = await invite(t);
    await json(await call(t.path, { method: "DELETE", key: t.key }), 200);
    const invitee2 = await signIn(inv2.email);
    await expectError(await accept(invitee2.session, inv2.token), 410, "gone");
    expect(await env.DB.prepare("SELECT count(*) AS n FROM app_members WHERE app_id = ?1").bind(t.app.app_id).first("n")).toBe(0);
  });

  it("accepting when already a member keeps the existing membership", async () => {
    const t = await team();
    const inv = await invite(t, ["viewer"]);
    const invitee = await signIn(inv.email);
    await json(await call(`${t.path}/members`, { key: t.key, json: { email: inv.email, custom_roles: ["writer"] } }), 201);
    const body = await json<{ member: MemberBody }>(await accept(invitee.session, inv.token), 200);
    expect(body.member.customRoles).toEqual(["writer"]);
  });
});

describe("accepting an invitation in the console", () => {
  it("signed out → sign-in link back to /invite → accept → through /authorize into the app", async () => {
    const t = await team();
    const inv = await invite(t, ["writer"]);
    const { url } = await inviteLink(inv.email);
    const here = new URL(url).pathname + new URL(url).search;

    // Opening the link signed out shows who is invited and a form that mails a sign-in link back here.
    const page = await call(here);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("Team board");
    expect(html).toContain(inv.email);
    expect(html).toContain('action="/signin"');
    expect(html).toContain(`name="return_to" value="${here.replace(/&/g, "&amp;")}"`);
    // Opening the link changed nothing.
    expect(await listMembers(t)).toHaveLength(1);

    const sent = await call("/signin", { method: "POST", origin: "http://localhost:8787", ...form({ email: inv.email, return_to: here }) });
    expect(sent.status).toBe(303);
    const verified = await openLink(await latestLink(inv.email));
    expect(verified.status).toBe(302);
    expect(verified.headers.get("location")).toBe(here);
    const session = sessionFrom(verified)!;

    const signedIn = await call(here, { session });
    expect(signedIn.status).toBe(200);
    const acceptPage = await signedIn.text();
    expect(acceptPage).toContain('id="accept-invite"');
    expect(acceptPage).toContain(`name="token" value="${inv.token}"`);
    // The accept form's redirects may end on the app's origin (and nowhere else but here).
    expect(signedIn.headers.get("content-security-policy")).toContain(`form-action 'self' ${new URL(t.app.url).origin};`);

    // A cross-site post is refused before anything happens.
    const forged = await call("/invite", { method: "POST", session, origin: "https://evil.example", ...form({ token: inv.token }) });
    expect(forged.status).toBe(403);
    expect(await listMembers(t)).toHaveLength(1);

    const accepted = await call("/invite", { method: "POST", session, ...form({ token: inv.token }) });
    expect(accepted.status).toBe(303);
    // Straight into the app: /authorize signs the new member in on the app's own origin.
    expect(accepted.headers.get("location")).toBe(`/authorize?app=${t.app.slug}`);
    const members = await listMembers(t);
    expect(members[1]).toMatchObject({ email: inv.email, customRoles: ["writer"] });

    // /authorize now hands the new member a grant for the app.
    const authorize = await call(`/authorize?app=${t.app.slug}`, { session });
    expect(authorize.status).toBe(302);
    expect(authorize.headers.get("location")).toMatch(new RegExp(`^${t.app.url.replace(/\./g, "\\.")}#svc_grant=sgr_[0-9a-f]{32}$`));

    // The spent link answers 410 as a page.
    const spent = await call(here, { session });
    expect(spent.status).toBe(410);
    expect(spent.headers.get("content-type")).toMatch(/^text\/html/);
  });

  it("signed in as someone else: a 403 page offering to sign in as the invited address; nothing changes", async () => {
    const t = await team();
    const inv = await invite(t);
    const other = await signIn();
    const before = await state(t.app.app_id);
    const res = await call(`/invite?token=${inv.token}`, { session: other.session });
    expect(res.status).toBe(403);
    const html = await res.text();
    expect(html).toContain(other.email);
    expect(html).toContain(inv.email);
    expect(html).toContain('id="invite-sign-in"');
    const post = await call("/invite", { method: "POST", session: other.session, ...form({ token: inv.token }) });
    expect(post.status).toBe(403);
    expect(await post.text()).toContain('data-error-code="forbidden"');
    expect(await state(t.app.app_id)).toEqual(before);
  });

  it("an invalid or missing token is a page, not JSON", async () => {
    const gone = await call(`/invite?token=inv_${"a".repeat(32)}`);
    expect(gone.status).toBe(410);
    expect(await gone.text()).toContain('data-error-code="gone"');
    const missing = await call("/invite");
    expect(missing.status).toBe(400);
    expect(await missing.text()).toContain('data-error-code="invalid_request"');
    const email = freshEmail();
    const signedOut = await call("/invite", { method: "POST", origin: "http://localhost:8787", ...form({ token: `inv_${"b".repeat(32)}`, email }) });
    expect(signedOut.status).toBe(303);
  });
});
