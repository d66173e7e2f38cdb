// Ownership transfer: none → pending (offer mailed) → accepted (the previous owner kept
// as a member, or removed) | withdrawn; an offer past its seven days reads as none; the
// wrong recipient, a forged, spent, withdrawn or expired link, a deleted app and a
// recipient at the app cap are refused with their codes and change nothing. Another
// owner's app is app_not_found. The console page accepts with a same-origin form.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { API, call, callWith, claimedAgent, expectError, freshEmail, json, openLink, requestLink, sessionFrom, signIn } from "../helpers";
import { appCall, ownerToken } from "../serve/helpers";
import { accept, form, mailCount, mailsTo, offer, member, setup, state, type TransferBody } from "./fixtures";

type Obj = Record<string, unknown>;

async function getTransfer(path: string, key: string): Promise<TransferBody | null> {
  return (await json<{ transfer: TransferBody | null }>(await call(`${path}/transfer`, { key }), 200)).transfer;
}

describe("offering", () => {
  it("none → pending: GET null, POST 201 with the offer, one mail with a single-use link, GET shows it", async () => {
    const s = await setup();
    expect(await getTransfer(s.path, s.key)).toBeNull();
    const to = freshEmail("Recipient").toUpperCase();
    const res = await call(`${s.path}/transfer`, { key: s.key, json: { email: to } });
    const { transfer } = await json<{ transfer: TransferBody }>(res, 201);
    expect(Object.keys(transfer).sort()).toEqual(["app_id", "created_at", "expires_at", "id", "keep_as_member", "resolved_at", "status", "to_email"]);
    expect(transfer).toMatchObject({ app_id: s.app.app_id, status: "pending", to_email: to.toLowerCase(), keep_as_member: true, resolved_at: null });
    const ttl = Date.parse(transfer.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(7 * 86_400_000 - 60_000);
    expect(ttl).toBeLessThanOrEqual(7 * 86_400_000);
    const mails = await mailsTo(to.toLowerCase());
    expect(mails).toHaveLength(1);
    expect(mails[0].subject).toContain("Shared board");
    expect(mails[0].text).toContain(s.who.human.email);
    const token = /token=(trf_[0-9a-f]{32})/.exec(mails[0].text)![1];
    expect(JSON.stringify((await env.DB.prepare("SELECT * FROM app_transfers").all()).results)).not.toContain(token.slice(4));
    expect(await getTransfer(s.path, s.key)).toEqual(transfer);
    // The owner's session sees the same.
    expect((await json<{ transfer: TransferBody }>(await call(`${s.path}/transfer`, { session: s.who.human.session }), 200)).transfer).toEqual(transfer);
  });

  it("keep_as_member: false is recorded; the owner's session may offer too", async () => {
    const s = await setup();
    const res = await call(`${s.path}/transfer`, { session: s.who.human.session, json: { email: freshEmail(), keep_as_member: false } });
    expect((await json<{ transfer: TransferBody }>(res, 201)).transfer.keep_as_member).toBe(false);
  });

  it("a second offer while one is pending → 409 conflict with the pending one; nothing changed, no mail", async () => {
    const s = await setup();
    const first = freshEmail();
    const { transfer } = await offer(s, first);
    const second = freshEmail();
    const before = await state(s.app.app_id, first, second);
    const err = await expectError(await call(`${s.path}/transfer`, { key: s.key, json: { email: second } }), 409, "conflict");
    expect(err.details?.transfer).toEqual(transfer);
    expect(await state(s.app.app_id, first, second)).toEqual(before);
  });

  it("refusals: own address 409, bad bodies 400, no credential 401, cross-site 403, other owner 404, deleted app 410 — nothing changed", async () => {
    const s = await setup();
    const stranger = await claimedAgent(await signIn());
    const to = freshEmail();
    const before = await state(s.app.app_id, to, s.who.human.email);
    await expectError(await call(`${s.path}/transfer`, { key: s.key, json: { email: s.who.human.email.toUpperCase() } }), 409, "conflict");
    for (const body of [{}, { email: "not-an-address" }, { email: to, keep_as_member: "yes" }, { email: to, extra: 1 }]) {
      await expectError(await call(`${s.path}/transfer`, { key: s.key, json: body }), 400, "invalid_request");
    }
    await expectError(await call(`${s.path}/transfer`, { json: { email: to }, origin: API }), 401, "unauthorized");
    await expectError(await call(`${s.path}/transfer`, { session: s.who.human.session, origin: "https://evil.example", json: { email: to } }), 403, "csrf_origin_mismatch");
    for (const method of ["GET", "POST", "DELETE"]) {
      await expectError(await call(`${s.path}/transfer`, { method, key: stranger.api_key, ...(method === "POST" ? { json: { email: to } } : {}) }), 404, "app_not_found");
    }
    expect(await state(s.app.app_id, to, s.who.human.email)).toEqual(before);
    await json(await call(s.path, { method: "DELETE", key: s.key }), 200);
    for (const method of ["GET", "POST", "DELETE"]) {
      await expectError(await call(`${s.path}/transfer`, { method, key: s.key, ...(method === "POST" ? { json: { email: to } } : {}) }), 410, "soft_deleted");
    }
    expect(await env.DB.prepare("SELECT count(*) AS n FROM app_transfers WHERE app_id = ?1").bind(s.app.app_id).first("n")).toBe(0);
  });
});

describe("accepting", () => {
  it("pending → accepted, keeping the old owner as a member: the app, its agents' reach and the sessions follow the new owner", async () => {
    const s = await setup();
    const oldOwnerToken = await ownerToken(s.who.human, s.app.slug);
    const recipient = await signIn();
    const newAgent = await claimedAgent(recipient);
    const { token, transfer } = await offer(s, recipient.email);

    const res = await accept(recipient, token);
    const body = await json<Obj>(res, 200);
    expect(body).toMatchObject({ app_id: s.app.app_id, slug: s.app.slug, url: s.app.url, role: "owner" });
    expect(body.transfer).toMatchObject({ id: transfer.id, status: "accepted", keep_as_member: true });
    expect((body.transfer as TransferBody).resolved_at).not.toBeNull();

    const row = await env.DB.prepare("SELECT owner_human_id FROM apps WHERE id = ?1").bind(s.app.app_id).first();
    expect(row).toEqual({ owner_human_id: recipient.humanId });
    // The old owner's agent no longer reaches it; the new owner's agent does.
    await expectError(await call(s.path, { key: s.key }), 404, "app_not_found");
    expect((await json<Obj>(await call(s.path, { key: newAgent.api_key }), 200)).owner_human_id).toBe(recipient.humanId);
    // The old owner is now a plain member; the new owner is listed as owner.
    const { members } = await json<{ members: Obj[] }>(await call(`${s.path}/members`, { key: newAgent.api_key }), 200);
    expect(members.map((m) => [m.humanId, m.role])).toEqual([[recipient.humanId, "owner"], [s.who.human.humanId, "member"]]);
    // The old owner's app session keeps working, with a member's reach; a new sign-in is a member session too.
    expect((await json<{ kind: string }>(await appCall(s.app.slug, "/_svc/session", { token: oldOwnerToken }), 200)).kind).toBe("member");
    await expectError(await appCall(s.app.slug, "/_svc/c/secret", { token: oldOwnerToken }), 403, "collection_read_forbidden");
    const again = await ownerToken(s.who.human, s.app.slug);
    expect((await json<{ kind: string }>(await appCall(s.app.slug, "/_svc/session", { token: again }), 200)).kind).toBe("member");
    // Both see it in /v1/self/apps with their new roles.
    const mine = await json<{ items: Obj[] }>(await call("/v1/self/apps", { session: recipient.session }), 200);
    expect(mine.items.find((i) => i.id === s.app.app_id)?.role).toBe("owner");
    const theirs = await json<{ items: Obj[] }>(await call("/v1/self/apps", { session: s.who.human.session }), 200);
    expect(theirs.items.find((i) => i.id === s.app.app_id)?.role).toBe("member");
    // No transfer is pending any more; the previous owner was told.
    expect(await getTransfer(s.path, newAgent.api_key)).toBeNull();
    expect((await mailsTo(s.who.human.email))[0].subject).toContain(recipient.email);
  });

  it("pending → accepted with keep_as_member false: the old owner loses all access", async () => {
    const s = await setup();
    const oldToken = await ownerToken(s.who.human, s.app.slug);
    const recipient = await signIn();
    const { token } = await offer(s, recipient.email, false);
    await json(await accept(recipient, token), 200);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM app_members WHERE app_id = ?1").bind(s.app.app_id).first("n")).toBe(0);
    await expectError(await appCall(s.app.slug, "/_svc/session", { token: oldToken }), 401, "unauthorized");
    const authorize = await call(`/authorize?app=${s.app.slug}&return=${encodeURIComponent(s.app.url)}`, { session: s.who.human.session });
    expect(authorize.status).toBe(403);
    const listed = await json<{ items: Obj[] }>(await call("/v1/self/apps", { session: s.who.human.session }), 200);
    expect(listed.items.map((i) => i.id)).not.toContain(s.app.app_id);
  });

  it("a recipient who was a member becomes the owner and leaves the member list", async () => {
    const s = await setup();
    const recipient = await member(s);
    const { token } = await offer(s, recipient.email);
    await json(await accept(recipient, token), 200);
    const rows = (await env.DB.prepare("SELECT human_id FROM app_members WHERE app_id = ?1 ORDER BY human_id").bind(s.app.app_id).all()).results;
    expect(rows).toEqual([{ human_id: s.who.human.humanId }]);
  });

  it("a recipient with no account yet signs in through the mailed address, then accepts", async () => {
    const s = await setup();
    const email = freshEmail("newcomer");
    const { token } = await offer(s, email);
    const link = await requestLink(email, `/transfer?token=${token}`);
    const opened = await openLink(link);
    expect(opened.headers.get("location")).toBe(`/transfer?token=${token}`);
    const session = sessionFrom(opened)!;
    const res = await call("/v1/self/transfers/accept", { session, json: { token } });
    expect((await json<Obj>(res, 200)).role).toBe("owner");
  });

  it("the spent link → 410 gone; the app stays with the new owner", async () => {
    const s = await setup();
    const recipient = await signIn();
    const { token } = await offer(s, recipient.email);
    await json(await accept(recipient, token), 200);
    const before = await state(s.app.app_id);
    await expectError(await accept(recipient, token), 410, "gone");
    expect(await state(s.app.app_id)).toEqual(before);
  });

  it("the wrong recipient → 403 forbidden, the offer stays pending and the right one can still accept", async () => {
    const s = await setup();
    const recipient = await signIn();
    const intruder = await signIn();
    const { token } = await offer(s, recipient.email);
    const before = await state(s.app.app_id);
    const err = await expectError(await accept(intruder, token), 403, "forbidden");
    expect(err.details?.reason).toBe("transfer_email_mismatch");
    // Not even the current owner may accept it for someone else.
    await expectError(await accept(s.who.human, token), 403, "forbidden");
    expect(await state(s.app.app_id)).toEqual(before);
    await json(await accept(recipient, token), 200);
  });

  it("forged, malformed or missing tokens → 410 gone / 400; without a session 401; cross-site 403 — nothing changed", async () => {
    const s = await setup();
    const recipient = await signIn();
    const { token } = await offer(s, recipient.email);
    const before = await state(s.app.app_id);
    for (const forged of ["trf_" + "0".repeat(32), token.slice(0, -1) + (token.endsWith("a") ? "b" : "a"), "inv_" + token.slice(4), "nonsense"]) {
      await expectError(await accept(recipient, forged), 410, "gone");
    }
    await expectError(await call("/v1/self/transfers/accept", { session: recipient.session, json: {} }), 400, "invalid_request");
    await expectError(await call("/v1/self/transfers/accept", { session: recipient.session, json: { token: "x".repeat(201) } }), 400, "invalid_request");
    await expectError(await call("/v1/self/transfers/accept", { json: { token }, origin: API }), 401, "unauthorized");
    await expectError(await call("/v1/self/transfers/accept", { session: recipient.session, origin: "https://evil.example", json: { token } }), 403, "csrf_origin_mismatch");
    expect(await state(s.app.app_id)).toEqual(before);
  });

  it("a recipient already at MAX_APPS_PER_ACCOUNT → 409 account_quota_exceeded; the offer stays pending", async () => {
    const s = await setup();
    const recipient = await signIn();
    const theirs = await setup();
    // Give the recipient one app of their own by transfer, then cap them at one.
    const first = await offer(theirs, recipient.email);
    await json(await accept(recipient, first.token), 200);
    const { token } = await offer(s, recipient.email);
    const before = await state(s.app.app_id);
    await expectError(await callWith({ MAX_APPS_PER_ACCOUNT: "1" }, "/v1/self/transfers/accept", { session: recipient.session, json: { token } }), 409, "account_quota_exceeded");
    expect(await state(s.app.app_id)).toEqual(before);
    await json(await accept(recipient, token), 200);
  });

  it("an app deleted while the offer is pending → 410 gone, ownership unchanged", async () => {
    const s = await setup();
    const recipient = await signIn();
    const { token } = await offer(s, recipient.email);
    await json(await call(s.path, { method: "DELETE", key: s.key }), 200);
    const before = await state(s.app.app_id);
    await expectError(await accept(recipient, token), 410, "gone");
    expect(await state(s.app.app_id)).toEqual(before);
  });
});

describe("withdrawing and expiry", () => {
  it("pending → withdrawn: 200 with the offer; the link is dead; a second withdraw is 404; a new offer may follow", async () => {
    const s = await setup();
    const recipient = await signIn();
    const { token, transfer } = await offer(s, recipient.email);
    const res = await call(`${s.path}/transfer`, { method: "DELETE", session: s.who.human.session });
    const body = await json<{ transfer: TransferBody }>(res, 200);
    expect(body.transfer).toMatchObject({ id: transfer.id, status: "withdrawn" });
    expect(body.transfer.resolved_at).not.toBeNull();
    expect(await getTransfer(s.path, s.key)).toBeNull();
    const before = await state(s.app.app_id);
    await expectError(await accept(recipient, token), 410, "gone");
    await expectError(await call(`${s.path}/transfer`, { method: "DELETE", key: s.key }), 404, "not_found");
    expect(await state(s.app.app_id)).toEqual(before);
    const next = await offer(s, recipient.email);
    expect(next.token).not.toBe(token);
    await json(await accept(recipient, next.token), 200);
  });

  it("pending past its expiry reads as none: GET null, accept 410, withdraw 404, a new offer is allowed", async () => {
    const s = await setup();
    const recipient = await signIn();
    const { token, transfer } = await offer(s, recipient.email);
    await env.DB.prepare("UPDATE app_transfers SET expires_at = ?1 WHERE id = ?2").bind(new Date(Date.now() - 1000).toISOString(), transfer.id).run();
    expect(await getTransfer(s.path, s.key)).toBeNull();
    const before = await state(s.app.app_id);
    await expectError(await accept(recipient, token), 410, "gone");
    await expectError(await call(`${s.path}/transfer`, { method: "DELETE", key: s.key }), 404, "not_found");
    expect(await state(s.app.app_id)).toEqual(before);
    await offer(s, recipient.email);
  });

  it("without mail the relay cannot offer: 503 auth_provider_unavailable, nothing stored", async () => {
    const s = await setup();
    const to = freshEmail();
    const res = await callWith({ RELAY_ENV: "production", MAIL: undefined }, `${s.path}/transfer`, { key: s.key, json: { email: to } });
    await expectError(res, 503, "auth_provider_unavailable");
    expect(await env.DB.prepare("SELECT count(*) AS n FROM app_transfers WHERE app_id = ?1").bind(s.app.app_id).first("n")).toBe(0);
  });
});

describe("the console page /transfer", () => {
  it("signed out: offers a sign-in link for the offered address; wrong account: 403 page; right account: accept form → 303 to the app", async () => {
    const s = await setup();
    const recipient = await signIn();
    const intruder = await signIn();
    const { token } = await offer(s, recipient.email);
    const mailsBefore = await mailCount(recipient.email);
    const page = `/transfer?token=${token}`;

    const out = await call(page);
    expect(out.status).toBe(200);
    const outHtml = await out.text();
    expect(outHtml).toContain('id="transfer-summary"');
    expect(outHtml).toContain(`value="${recipient.email}"`);
    expect(outHtml).toContain('action="/signin"');

    const wrong = await call(page, { session: intruder.session });
    expect(wrong.status).toBe(403);
    expect(await wrong.text()).toContain('data-error-code="forbidden"');
    const wrongPost = await call("/transfer", { method: "POST", session: intruder.session, ...form([["token", token]]) });
    expect(wrongPost.status).toBe(403);

    const right = await call(page, { session: recipient.session });
    expect(right.status).toBe(200);
    const html = await right.text();
    expect(html).toContain('id="accept-transfer"');
    expect(html).toContain("stays on the app as a member");

    const before = await state(s.app.app_id);
    const evil = await call("/transfer", { method: "POST", session: recipient.session, origin: "https://evil.example", ...form([["token", token]]) });
    expect(evil.status).toBe(403);
    expect(await evil.text()).toContain('data-error-code="csrf_origin_mismatch"');
    expect(await state(s.app.app_id)).toEqual(before);

    const done = await call("/transfer", { method: "POST", session: recipient.session, ...form([["token", token]]) });
    expect(done.status).toBe(303);
    expect(done.headers.get("location")).toBe(`/console/apps/${s.app.app_id}`);
    expect((await call(done.headers.get("location")!, { session: recipient.session })).status).toBe(200);
    expect(await env.DB.prepare("SELECT owner_human_id FROM apps WHERE id = ?1").bind(s.app.app_id).first("owner_human_id")).toBe(recipient.humanId);

    const spent = await call(page, { session: recipient.session });
    expect(spent.status).toBe(410);
    expect(await spent.text()).toContain('data-error-code="gone"');
    expect((await call("/transfer")).status).toBe(400);
    expect(await mailCount(recipient.email)).toBe(mailsBefore);
  });
});
