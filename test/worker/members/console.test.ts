// The console's members pages: "Your apps" (owned and joined, with the role), an owned
// app's people and access page (`/console/apps/:id/members`), and its forms — add by email (member or invitation), set roles
// (checkboxes; none clears), remove, withdraw an invitation — each same-origin checked,
// redirecting back with a flash, or re-rendering with the refusal. Another owner's app
// is a 404 page; a signed-out visitor is sent to sign in; /v1/self/apps lists the same.
import { describe, expect, it } from "vitest";
import { call, freshEmail, json, signIn } from "../helpers";
import { invite, latestMail, listMembers, member, state, team } from "./fixtures";

function form(fields: Array<[string, string]>): { body: string; contentType: string } {
  return { body: new URLSearchParams(fields).toString(), contentType: "application/x-www-form-urlencoded" };
}

describe("console: your apps", () => {
  it("lists owned apps and joined apps with the role", async () => {
    const mine = await team();
    const theirs = await team("link");
    const me = mine.who.human;
    await json(await call(`${theirs.path}/members`, { key: theirs.key, json: { email: me.email, custom_roles: ["viewer"] } }), 201);

    const res = await call("/console/apps", { session: me.session });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toMatch(new RegExp(`<tr data-app-id="${mine.app.app_id}" data-role="owner">`));
    expect(html).toMatch(new RegExp(`<tr data-app-id="${theirs.app.app_id}" data-role="member">`));
    expect(html).toContain(`href="/console/apps/${mine.app.app_id}"`);
    expect(html).not.toContain(`href="/console/apps/${theirs.app.app_id}"`);
    expect(html).toContain("<code>viewer</code>");

    const api = await json<{ items: Array<Record<string, unknown>>; next_cursor: null }>(await call("/v1/self/apps", { session: me.session }), 200);
    expect(api.next_cursor).toBeNull();
    expect(api.items.map((i) => [i.id, i.role, i.custom_roles])).toEqual([[mine.app.app_id, "owner", []], [theirs.app.app_id, "member", ["viewer"]]]);
    expect(api.items[1]).toMatchObject({ slug: theirs.app.slug, visibility: "link", url: theirs.app.url, status: "active" });

    expect((await call("/console/apps")).headers.get("location")).toBe("/signin?return_to=%2Fconsole%2Fapps");
    expect((await call("/v1/self/apps")).status).toBe(401);
  });
});

describe("console: an app's members", () => {
  it("shows the owner and members, and adds, re-roles and removes through forms", async () => {
    const t = await team();
    const session = t.who.human.session;
    const base = `/console/apps/${t.app.app_id}`;
    const page = await call(`${base}/members`, { session });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(`data-human-id="${t.who.human.humanId}" data-role="owner"`);
    expect(html).toContain('name="role" value="writer"');

    // Add an existing account with a role.
    const friend = await signIn();
    const added = await call(`${base}/members`, { method: "POST", session, ...form([["email", friend.email], ["role", "writer"]]) });
    expect(added.status).toBe(303);
    expect(added.headers.get("location")).toBe(`${base}/members?flash=added&who=${encodeURIComponent(friend.email)}`);
    expect((await listMembers(t))[1]).toMatchObject({ humanId: friend.humanId, customRoles: ["writer"] });
    const flashed = await (await call(added.headers.get("location")!, { session })).text();
    expect(flashed).toContain(`${friend.email} is now a member.`);

    // Invite an unknown address.
    const email = freshEmail("console-invite");
    const invited = await call(`${base}/members`, { method: "POST", session, ...form([["email", email]]) });
    expect(invited.status).toBe(303);
    expect((await latestMail(email)).subject).toBe("You are invited to Team board");
    const withInvite = await (await call(invited.headers.get("location")!, { session })).text();
    expect(withInvite).toContain(`Invitation mailed to ${email}.`);
    expect(withInvite).toContain(`<tr data-email="${email}">`);

    // Re-role with checkboxes; no box clears.
    const reroled = await call(`${base}/members/${friend.humanId}/roles`, { method: "POST", session, ...form([["role", "viewer"], ["role", "reviewer"]]) });
    expect(reroled.status).toBe(303);
    expect((await listMembers(t))[1].customRoles).toEqual(["viewer", "reviewer"]);
    await call(`${base}/members/${friend.humanId}/roles`, { method: "POST", session, ...form([]) });
    expect((await listMembers(t))[1].customRoles).toEqual([]);

    // Remove.
    const removed = await call(`${base}/members/${friend.humanId}/remove`, { method: "POST", session, ...form([]) });
    expect(removed.status).toBe(303);
    expect(await listMembers(t)).toHaveLength(1);
  });

  it("re-renders the page with the refusal: bad address, undeclared role, the owner", async () => {
    const t = await team();
    const session = t.who.human.session;
    const base = `/console/apps/${t.app.app_id}`;
    const friend = await member(t);
    const before = await state(t.app.app_id);
    const bad = await call(`${base}/members`, { method: "POST", session, ...form([["email", "nope"]]) });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('id="form-error"');
    const ghost = await call(`${base}/members`, { method: "POST", session, ...form([["email", freshEmail()], ["role", "ghost"]]) });
    expect(ghost.status).toBe(400);
    expect(await ghost.text()).toContain("declares no role");
    const ownerAdd = await call(`${base}/members`, { method: "POST", session, ...form([["email", t.who.human.email]]) });
    expect(ownerAdd.status).toBe(409);
    const ownerRemove = await call(`${base}/members/${t.who.human.humanId}/remove`, { method: "POST", session, ...form([]) });
    expect(ownerRemove.status).toBe(409);
    const ownerRole = await call(`${base}/members/${t.who.human.humanId}/roles`, { method: "POST", session, ...form([["role", "writer"]]) });
    expect(ownerRole.status).toBe(409);
    const tooMany = await call(`${base}/members/${friend.humanId}/roles`, {
      method: "POST", session, ...form(["writer", "viewer", "reviewer", "r1", "r2", "r3", "r4", "r5", "r6"].map((r) => ["role", r])),
    });
    expect(tooMany.status).toBe(400);
    expect(await state(t.app.app_id)).toEqual(before);
  });

  it("refuses cross-site posts, other owners and signed-out visitors, changing nothing", async () => {
    const t = await team();
    const other = await team();
    const friend = await member(t);
    const inv = await invite(t);
    const base = `/console/apps/${t.app.app_id}`;
    const before = await state(t.app.app_id);

    const forged = await call(`${base}/members/${friend.humanId}/remove`, { method: "POST", session: t.who.human.session, origin: "https://evil.example", ...form([]) });
    expect(forged.status).toBe(403);
    expect(await forged.text()).toContain('data-error-code="csrf_origin_mismatch"');

    for (const [method, path, body] of [
      ["GET", base, []], ["GET", `${base}/members`, []], ["POST", `${base}/members`, [["email", freshEmail()]]], ["POST", `${base}/members/${friend.humanId}/remove`, []],
      ["POST", `${base}/members/${friend.humanId}/roles`, [["role", "writer"]]], ["POST", `${base}/invites/cancel`, [["email", inv.email]]],
    ] as Array<[string, string, Array<[string, string]>]>) {
      const res = await call(path, { method, session: other.who.human.session, ...(method === "POST" ? form(body) : {}) });
      expect(res.status, path).toBe(404);
      expect(await res.text()).toContain('data-error-code="app_not_found"');
      // A member cannot manage the app either.
      const asMember = await call(path, { method, session: friend.session, ...(method === "POST" ? form(body) : {}) });
      expect(asMember.status, path).toBe(404);
    }
    const signedOut = await call(base);
    expect(signedOut.status).toBe(302);
    expect(signedOut.headers.get("location")).toBe(`/signin?return_to=${encodeURIComponent(base)}`);
    expect(await state(t.app.app_id)).toEqual(before);
  });
});
