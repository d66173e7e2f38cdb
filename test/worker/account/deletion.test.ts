// Account deletion: DELETE /v1/self mails a confirmation link and deletes nothing; the
// link's page asks for a same-origin form post; confirming trashes the apps owned,
// revokes the agents' keys, ends every session, memberships and organization seats
// (handing the last admin seat on), withdraws pending transfers, removes the person's
// own marks and the person, and signs this browser out. Dead links (spent, replaced,
// expired, forged) are 410 and change nothing.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { API, call, callWith, claimedAgent, expectError, freshEmail, json, keyStatus, signIn } from "../helpers";
import { form, mailedToken, member, offer, setup } from "./fixtures";

type Obj = Record<string, unknown>;

async function ask(session: string): Promise<{ ok: true; email: string; expires_at: string }> {
  return json(await call("/v1/self", { method: "DELETE", session }), 202);
}

async function humanRows(humanId: string): Promise<Obj> {
  const n = async (sql: string) => env.DB.prepare(sql).bind(humanId).first<number>("n");
  return {
    humans: await n("SELECT count(*) AS n FROM humans WHERE id = ?1"),
    sessions: await n("SELECT count(*) AS n FROM sessions WHERE human_id = ?1"),
    liveApps: await n("SELECT count(*) AS n FROM apps WHERE owner_human_id = ?1 AND status != 'deleted'"),
    liveKeys: await n("SELECT count(*) AS n FROM agent_keys WHERE revoked_at IS NULL AND agent_id IN (SELECT id FROM agents WHERE owner_human_id = ?1)"),
    memberships: await n("SELECT count(*) AS n FROM app_members WHERE human_id = ?1"),
    orgSeats: await n("SELECT count(*) AS n FROM org_members WHERE human_id = ?1"),
    pendingTransfers: await n("SELECT count(*) AS n FROM app_transfers WHERE from_human_id = ?1 AND status = 'pending'"),
    favorites: await n("SELECT count(*) AS n FROM app_favorites WHERE human_id = ?1"),
    push: await n("SELECT count(*) AS n FROM push_subscriptions WHERE human_id = ?1"),
    signup: await n("SELECT count(*) AS n FROM signup_sources WHERE human_id = ?1"),
    claimCodes: await n("SELECT count(*) AS n FROM claim_codes WHERE human_id = ?1 AND used_at IS NULL"),
  };
}

describe("asking", () => {
  it("DELETE /v1/self → 202 and a mailed link; nothing is deleted yet; asking again replaces the link", async () => {
    const me = await signIn();
    const body = await ask(me.session);
    expect(body).toMatchObject({ ok: true, email: me.email });
    const ttl = Date.parse(body.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(3_540_000);
    expect(ttl).toBeLessThanOrEqual(3_600_000);
    const first = await mailedToken(me.email, "account/delete");
    expect((await json<Obj>(await call("/v1/self/profile", { session: me.session }), 200)).id).toBe(me.humanId);
    await ask(me.session);
    const second = await mailedToken(me.email, "account/delete");
    expect(second).not.toBe(first);
    expect((await call(`/account/delete?token=${first}`)).status).toBe(410);
    expect((await call(`/account/delete?token=${second}`)).status).toBe(200);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM account_deletions WHERE human_id = ?1").bind(me.humanId).first("n")).toBe(1);
  });

  it("signed out 401, an agent key 401, cross-site 403, no mail provider 503 — nothing stored", async () => {
    const me = await signIn();
    const agent = await claimedAgent(me);
    await expectError(await call("/v1/self", { method: "DELETE", origin: API }), 401, "unauthorized");
    await expectError(await call("/v1/self", { method: "DELETE", key: agent.api_key }), 401, "unauthorized");
    await expectError(await call("/v1/self", { method: "DELETE", session: me.session, origin: "https://evil.example" }), 403, "csrf_origin_mismatch");
    await expectError(await callWith({ RELAY_ENV: "production", MAIL: undefined }, "/v1/self", { method: "DELETE", session: me.session }), 503, "auth_provider_unavailable");
    expect(await env.DB.prepare("SELECT count(*) AS n FROM account_deletions WHERE human_id = ?1").bind(me.humanId).first("n")).toBe(0);
  });
});

describe("confirming", () => {
  it("the page asks first; the form post deletes the account exactly as documented", async () => {
    const s = await setup();
    const me = s.who.human;
    // Everything the account touches: a second agent, an app in someone else's hands, an org, marks, a pending transfer.
    const secondAgent = await claimedAgent(me);
    const theirs = await setup();
    await json(await call(`${theirs.path}/members`, { key: theirs.key, json: { email: me.email } }), 201);
    const colleague = await signIn();
    const org = (await json<{ org: { id: string } }>(await call("/v1/orgs", { session: me.session, json: { name: "Mine" } }), 201)).org;
    await json(await call(`/v1/orgs/${org.id}/members`, { session: me.session, json: { email: colleague.email } }), 201);
    const solo = (await json<{ org: { id: string } }>(await call("/v1/orgs", { session: me.session, json: { name: "Alone" } }), 201)).org;
    await json(await call(`/v1/self/apps/${theirs.app.app_id}/favorite`, { method: "PUT", session: me.session }), 200);
    await json(await call("/v1/self/signup-source", { session: me.session, json: { source: "friend" } }), 201);
    const recipient = await signIn();
    const transfer = await offer(s, recipient.email);
    await json(await call("/v1/self/claim-codes", { method: "POST", session: me.session }), 201);
    const otherSession = (await signIn(me.email)).session;
    const friend = await member(s);

    await ask(me.session);
    const token = await mailedToken(me.email, "account/delete");
    const page = await call(`/account/delete?token=${token}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(me.email);
    expect(html).toContain('id="confirm-deletion"');
    expect((await humanRows(me.humanId)).humans).toBe(1);

    const evil = await call("/account/delete", { method: "POST", origin: "https://evil.example", ...form([["token", token]]) });
    expect(evil.status).toBe(403);
    const before = await humanRows(me.humanId);
    expect(before).toMatchObject({ humans: 1, liveApps: 1, liveKeys: 2, memberships: 1, orgSeats: 2, pendingTransfers: 1 });

    const done = await call("/account/delete", { method: "POST", session: me.session, ...form([["token", token]]) });
    expect(done.status).toBe(200);
    expect(await done.text()).toContain('id="deleted"');
    expect(done.headers.get("set-cookie") ?? "").toMatch(/relay_session=;.*Max-Age=0/i);

    expect(await humanRows(me.humanId)).toEqual({
      humans: 0, sessions: 0, liveApps: 0, liveKeys: 0, memberships: 0, orgSeats: 0, pendingTransfers: 0,
      favorites: 0, push: 0, signup: 0, claimCodes: 0,
    });
    // The app is in the trash with its data, out of reach of the revoked agents.
    const app = await env.DB.prepare("SELECT status, status_before_delete, deleted_at FROM apps WHERE id = ?1").bind(s.app.app_id).first<Obj>();
    expect(app).toMatchObject({ status: "deleted", status_before_delete: "active" });
    expect(await keyStatus(s.key)).toBe(401);
    expect(await keyStatus(secondAgent.api_key)).toBe(401);
    // Every session is gone, this one and the other browser's.
    await expectError(await call("/v1/self/profile", { session: me.session }), 401, "unauthorized");
    await expectError(await call("/v1/self/profile", { session: otherSession }), 401, "unauthorized");
    // The transfer link died with the offer.
    await expectError(await call("/v1/self/transfers/accept", { session: recipient.session, json: { token: transfer.token } }), 410, "gone");
    // The organization lives on under the colleague, who is now its admin and billing account; the solo one is gone.
    const kept = (await json<{ org: Obj }>(await call(`/v1/orgs/${org.id}`, { session: colleague.session }), 200)).org;
    expect(kept).toMatchObject({ role: "admin", billing_human_id: colleague.humanId, member_count: 1 });
    expect(await env.DB.prepare("SELECT count(*) AS n FROM orgs WHERE id = ?1").bind(solo.id).first("n")).toBe(0);
    // Other people's apps lose the member; their own access is untouched.
    const { members } = await json<{ members: Obj[] }>(await call(`${theirs.path}/members`, { key: theirs.key }), 200);
    expect(members.map((m) => m.humanId)).toEqual([theirs.who.human.humanId]);
    expect(await keyStatus(theirs.key)).toBe(200);
    expect(friend.humanId).not.toBe(me.humanId);
    // The link is spent; the address may start over as a new account.
    expect((await call("/account/delete", { method: "POST", origin: API, ...form([["token", token]]) })).status).toBe(410);
    const again = await signIn(me.email);
    expect(again.humanId).not.toBe(me.humanId);
    expect((await json<{ items: unknown[] }>(await call("/v1/self/apps", { session: again.session }), 200)).items).toEqual([]);
  });

  it("dead links: forged, malformed, expired → 410 on the page and the post; nothing deleted", async () => {
    const me = await signIn();
    await ask(me.session);
    const token = await mailedToken(me.email, "account/delete");
    for (const bad of ["del_" + "0".repeat(32), "trf_" + token.slice(4), "x"]) {
      expect((await call(`/account/delete?token=${bad}`)).status).toBe(410);
      expect((await call("/account/delete", { method: "POST", origin: API, ...form([["token", bad]]) })).status).toBe(410);
    }
    // Opened bare, the page asks a signed-out visitor to sign in; an empty token is a broken link.
    const bare = await call("/account/delete");
    expect(bare.status).toBe(200);
    expect(await bare.text()).toContain('id="sign-in-to-delete"');
    expect((await call("/account/delete?token=")).status).toBe(400);
    await env.DB.prepare("UPDATE account_deletions SET expires_at = ?1 WHERE human_id = ?2").bind(new Date(Date.now() - 1000).toISOString(), me.humanId).run();
    expect((await call(`/account/delete?token=${token}`)).status).toBe(410);
    const post = await call("/account/delete", { method: "POST", origin: API, ...form([["token", token]]) });
    expect(post.status).toBe(410);
    expect(await post.text()).toContain('data-error-code="gone"');
    expect((await humanRows(me.humanId)).humans).toBe(1);
    expect((await json<Obj>(await call("/v1/self/profile", { session: me.session }), 200)).id).toBe(me.humanId);
  });

  it("the link works without a session (it went to the account's address) and only deletes that account", async () => {
    const me = await signIn(freshEmail("leaving"));
    const bystander = await signIn();
    await ask(me.session);
    const token = await mailedToken(me.email, "account/delete");
    const done = await call("/account/delete", { method: "POST", session: bystander.session, ...form([["token", token]]) });
    expect(done.status).toBe(200);
    expect((await humanRows(me.humanId)).humans).toBe(0);
    expect((await humanRows(bystander.humanId)).humans).toBe(1);
  });
});
