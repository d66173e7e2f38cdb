// An accepted ownership transfer revokes every live service credential of the app in its
// accept batch (a credential acts with whoever owns the app now, so one minted by the
// previous owner must not carry on under the new owner's authority), exactly as the
// revoke route does: the old tokens answer 401 with reason revoked, an overlap-window
// token dies with its credential, the list shows them revoked, and a credential revoked
// earlier keeps its first revoked_at. Grant links, and the holders they admitted, keep
// working. An offer withdrawn, expired or refused (wrong address, app cap) revokes nothing, and a
// replayed accept does not touch the credentials the new owner minted since.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, callWith, claimedAgent, expectError, json, signIn, type SignedIn } from "../helpers";
import { appCall } from "../serve/helpers";
import { accessSnapshot, setup, type App, type Minted } from "../access/fixtures";
import { accept, form, mailedToken, mailsTo, type TransferBody } from "./fixtures";

type Obj = Record<string, unknown>;

interface Accepted {
  app_id: string;
  role: string;
  transfer: TransferBody;
  credentials_revoked: number;
}

interface Before {
  app: App;
  explicit: Minted;
  following: Minted;
  /** Rotated with an overlap: `rotated.token` is current, `overlapToken` the old one still inside its window. */
  rotated: Minted;
  overlapToken: string;
  paused: Minted;
  /** Revoked by the owner before the offer. */
  earlier: Minted;
  earlierRevokedAt: string;
  holder: string;
  grantToken: string;
}

function rows(app: App, token: string, collection = "notes"): Promise<Response> {
  return app.withToken(token, app.rows(collection));
}

async function exchange(app: App, grant: string): Promise<Response> {
  return appCall(app.slug, "/_svc/grant", { json: { grant } });
}

/** An app with credentials of every live kind, one revoked earlier, and a grant link with a holder. */
async function before(): Promise<Before> {
  const app = await setup();
  await app.create("notes", { text: "hello", project: "a" }, "n1");
  const explicit = await app.mint({ label: "explicit", grants: [{ collection: "notes", ops: ["read"] }, { collection: "secrets", ops: ["read"] }] });
  const following = await app.mint({ label: "following", mode: "following", members: true });
  const rotatedFirst = await app.mint({ label: "rotated", grants: [{ collection: "notes", ops: ["read"] }] });
  const turned = await json<{ token: string }>(await app.call(`${app.credentials}/${rotatedFirst.id}/rotate`, { json: { overlap_seconds: 3600 } }), 200);
  const paused = await app.mint({ label: "paused", grants: [{ collection: "notes", ops: ["read"] }] });
  await json(await app.call(`${app.credentials}/${paused.id}/pause`, { method: "POST" }), 200);
  const earlier = await app.mint({ label: "earlier" });
  const gone = await json<{ revoked_at: string }>(await app.call(`${app.credentials}/${earlier.id}`, { method: "DELETE" }), 200);

  const link = await app.mintGrant({ role: "guest", pin: { row_key: "n1" } });
  const grantToken = /#g=(gr_[0-9a-f]{32})$/.exec(link.grant_url)![1];
  const held = await json<{ token: string }>(await exchange(app, grantToken), 200);

  // Everything works before any offer.
  for (const token of [explicit.token, following.token, turned.token, rotatedFirst.token]) expect((await rows(app, token)).status).toBe(200);
  expect((await rows(app, following.token, "secrets")).status).toBe(200);
  expect((await app.withToken(following.token, `/v1/apps/${app.appId}/members`)).status).toBe(200);
  expect((await appCall(app.slug, "/_svc/c/notes", { token: held.token })).status).toBe(200);
  return {
    app, explicit, following, rotated: { ...rotatedFirst, token: turned.token }, overlapToken: rotatedFirst.token, paused, earlier,
    earlierRevokedAt: gone.revoked_at, holder: held.token, grantToken,
  };
}

async function offer(b: Before, email: string, keepAsMember: boolean): Promise<{ transfer: TransferBody; token: string }> {
  const res = await b.app.call(`/v1/apps/${b.app.appId}/transfer`, { json: { email, keep_as_member: keepAsMember } });
  const { transfer } = await json<{ transfer: TransferBody }>(res, 201);
  return { transfer, token: await mailedToken(email, "transfer") };
}

async function revokedReason(res: Response, reason: string): Promise<void> {
  const err = await expectError(res, 401, "unauthorized");
  expect(err.details).toMatchObject({ reason, credential: "service" });
}

/** After an acceptance: every credential minted before it is refused and listed revoked; the grant link still works. */
async function expectRevokedAfter(b: Before, done: Accepted, newOwner: SignedIn): Promise<void> {
  expect(done.credentials_revoked).toBe(4); // explicit, following, rotated, paused; not the one revoked earlier
  for (const token of [b.explicit.token, b.following.token, b.rotated.token, b.paused.token, b.earlier.token]) {
    await revokedReason(await rows(b.app, token), "revoked");
  }
  await revokedReason(await b.app.withToken(b.following.token, `/v1/apps/${b.app.appId}/members`), "revoked");
  // The overlap token is forgotten, as the revoke route does: no longer a token of any credential.
  await revokedReason(await rows(b.app, b.overlapToken), "unknown");

  const agent = await claimedAgent(newOwner);
  const { credentials } = await json<{ credentials: Obj[] }>(await call(`/v1/apps/${b.app.appId}/credentials`, { key: agent.api_key }), 200);
  expect(credentials).toHaveLength(5);
  for (const c of credentials) {
    expect(c, c.label as string).toMatchObject({ active: false, revoked_at: expect.any(String), previous_token_prefix: null, previous_expires_at: null });
    expect(c.revoked_at, c.label as string).toBe(c.id === b.earlier.id ? b.earlierRevokedAt : done.transfer.resolved_at);
  }
  const stored = (await env.DB.prepare("SELECT previous_token_hash, previous_expires_at FROM service_credentials WHERE id = ?1").bind(b.rotated.id).first())!;
  expect(stored).toEqual({ previous_token_hash: null, previous_expires_at: null });

  // Grant links stay: the holder keeps reading its pinned row, the link still admits people, and the new owner lists it.
  const pinned = await json<{ rows: Array<{ key: string }> }>(await appCall(b.app.slug, "/_svc/c/notes", { token: b.holder }), 200);
  expect(pinned.rows.map((r) => r.key)).toEqual(["n1"]);
  expect((await exchange(b.app, b.grantToken)).status).toBe(200);
  const { grants } = await json<{ grants: Obj[] }>(await call(`/v1/apps/${b.app.appId}/grants`, { key: agent.api_key }), 200);
  expect(grants).toHaveLength(1);
  expect(grants[0]).toMatchObject({ active: true, revoked_at: null, pin_row_key: "n1" });

  // The new owner mints their own, which acts with their authority.
  const fresh = await json<Minted>(await call(`/v1/apps/${b.app.appId}/credentials`, { key: agent.api_key, json: { mode: "following" } }), 201);
  expect((await rows(b.app, fresh.token, "secrets")).status).toBe(200);

  // The previous owner is told.
  const notice = (await mailsTo(b.app.human.email))[0];
  expect(notice.text).toContain("4 service credentials were revoked");
}

describe("accepting a transfer revokes the app's service credentials", () => {
  it("keeping the previous owner as a member: every live credential is refused as revoked; grant links work", async () => {
    const b = await before();
    const recipient = await signIn();
    const { token } = await offer(b, recipient.email, true);
    const done = await json<Accepted>(await accept(recipient, token), 200);
    expect(done).toMatchObject({ app_id: b.app.appId, role: "owner", transfer: { status: "accepted", keep_as_member: true } });
    await expectRevokedAfter(b, done, recipient);
    expect((await mailsTo(b.app.human.email))[0].text).toContain("You stay on the app as a member.");
  });

  it("remove me: the previous owner keeps no bearer token and no way to mint one", async () => {
    const b = await before();
    const recipient = await signIn();
    const { token } = await offer(b, recipient.email, false);
    const done = await json<Accepted>(await accept(recipient, token), 200);
    expect(done.transfer.keep_as_member).toBe(false);
    await expectRevokedAfter(b, done, recipient);
    await expectError(await b.app.call(b.app.credentials, { json: {} }), 404, "app_not_found");
    await expectError(await b.app.call(b.app.credentials, { session: b.app.human.session, json: {} }), 404, "app_not_found");
  });

  it("through the console's accept form too; an app without credentials reports none revoked", async () => {
    const b = await before();
    const recipient = await signIn();
    const { token } = await offer(b, recipient.email, true);
    const page = await (await call(`/transfer?token=${token}`, { session: recipient.session })).text();
    expect(page).toContain("Its service credentials are revoked");
    const res = await call("/transfer", { method: "POST", session: recipient.session, ...form([["token", token]]) });
    expect(res.status).toBe(303);
    await revokedReason(await rows(b.app, b.explicit.token), "revoked");

    const bare = await setup();
    const other = await signIn();
    const next = await offer({ ...b, app: bare }, other.email, true);
    expect((await json<Accepted>(await accept(other, next.token), 200)).credentials_revoked).toBe(0);
    expect((await mailsTo(bare.human.email))[0].text).not.toContain("service credential");
  });
});

describe("an offer that does not move the app revokes nothing", () => {
  it("withdrawn, refused (wrong address, the recipient's app cap) or expired: every credential keeps working", async () => {
    const b = await before();
    const recipient = await signIn();
    const snapshot = await accessSnapshot(b.app.appId);

    const first = await offer(b, recipient.email, false);
    await expectError(await accept(await signIn(), first.token), 403, "forbidden");
    await expectError(await accept(b.app.human, first.token), 403, "forbidden");
    await json(await b.app.call(`/v1/apps/${b.app.appId}/transfer`, { method: "DELETE" }), 200);
    await expectError(await accept(recipient, first.token), 410, "gone");

    const second = await offer(b, recipient.email, false);
    // Refused at the cap: the accept batch runs, its guard fails, so its revoke applies to nothing.
    await expectError(await callWith({ MAX_APPS_PER_ACCOUNT: "0" }, "/v1/self/transfers/accept", { session: recipient.session, json: { token: second.token } }), 409, "account_quota_exceeded");
    await env.DB.prepare("UPDATE app_transfers SET expires_at = ?1 WHERE id = ?2").bind(new Date(Date.now() - 1000).toISOString(), second.transfer.id).run();
    await expectError(await accept(recipient, second.token), 410, "gone");

    const after = await accessSnapshot(b.app.appId);
    // Only last_used_at may have moved (the calls below touch it); nothing was revoked.
    const strip = (s: Obj) => ({ ...s, credentials: (s.credentials as Obj[]).map(({ last_used_at: _, ...rest }) => rest) });
    expect(strip(after)).toEqual(strip(snapshot));
    for (const token of [b.explicit.token, b.following.token, b.rotated.token, b.overlapToken]) expect((await rows(b.app, token)).status).toBe(200);
    await revokedReason(await rows(b.app, b.paused.token), "paused");
    expect((await appCall(b.app.slug, "/_svc/c/notes", { token: b.holder })).status).toBe(200);
  });

  it("a replayed accept (410 gone) leaves the new owner's credentials alone", async () => {
    const b = await before();
    const recipient = await signIn();
    const { token } = await offer(b, recipient.email, true);
    await json(await accept(recipient, token), 200);
    const agent = await claimedAgent(recipient);
    const fresh = await json<Minted>(await call(`/v1/apps/${b.app.appId}/credentials`, { key: agent.api_key, json: { mode: "following" } }), 201);
    await expectError(await accept(recipient, token), 410, "gone");
    expect((await rows(b.app, fresh.token, "secrets")).status).toBe(200);
  });
});
