// The limits on adding people (issue 5): the owner's daily budget of mail to other people
// (INVITE_MAILS_PER_OWNER_DAY, default 50 per UTC day) and the per-address `invite` bucket
// (RATE_LIMIT_INVITE, default 20 per 60 s). Over either, an invitation is 429
// rate_limited with Retry-After and changes nothing: no invitation row, no mail. The
// budget is the owner's (all their apps, agent and session alike); other owners are
// unaffected; a notice to an existing account draws on it but is only skipped; refusals
// before the mail spend nothing; the console's form is held to the same limits. Tests set
// low limits through the environment (callWith), as the identity limiter tests do.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { awaitFreshWindow, call, callWith, expectError, freshEmail, freshIp, json, signIn, type CallOptions } from "../helpers";
import { deploy } from "../serve/helpers";
import { listMembers, rolesManifest, state, team, type Team } from "./fixtures";
import { config } from "../../../src/config";

const DAY = 86_400;

function capped(limit: number): Record<string, string> {
  return { INVITE_MAILS_PER_OWNER_DAY: String(limit) };
}

function add(limits: Record<string, string>, t: Team, email: string, opts: CallOptions = {}): Promise<Response> {
  return callWith(limits, `${t.path}/members`, { key: t.key, json: { email }, ...opts });
}

async function invited(res: Response): Promise<void> {
  await json<{ ok: true; invited: string }>(res, 200);
}

async function mailsTo(email: string): Promise<number> {
  return (await env.DB.prepare("SELECT count(*) AS n FROM dev_mail WHERE \"to\" = ?1").bind(email.toLowerCase()).first<number>("n")) ?? 0;
}

/** The daily refusal: 429, retryable, Retry-After = seconds to the next UTC day. */
async function expectDailyCap(res: Response, limit: number): Promise<void> {
  const retryAfter = res.headers.get("retry-after");
  const err = await expectError(res, 429, "rate_limited");
  expect(err.retryable).toBe(true);
  expect(retryAfter).toMatch(/^\d+$/);
  const seconds = Number(retryAfter);
  const toMidnight = Math.ceil((DAY * 1000 - (Date.now() % (DAY * 1000))) / 1000);
  expect(Math.abs(seconds - toMidnight)).toBeLessThanOrEqual(5);
  expect(err.details).toEqual({ retry_after: seconds, limit, per: "owner", window: "day" });
}

/** The per-address refusal: 429 with Retry-After within the 60 s window. */
async function expectAddressLimit(res: Response, limit: number): Promise<void> {
  const retryAfter = res.headers.get("retry-after");
  const err = await expectError(res, 429, "rate_limited");
  expect(err.retryable).toBe(true);
  const seconds = Number(retryAfter);
  expect(seconds).toBeGreaterThanOrEqual(1);
  expect(seconds).toBeLessThanOrEqual(60);
  expect(err.details).toEqual({ retry_after: seconds, limit });
}

describe("the owner's daily invitation mail cap", { timeout: 60_000 }, () => {
  it("has defaults: 50 mails per owner per day, 20 adds per address per minute", () => {
    const c = config({});
    expect(c.limits.INVITE_MAILS_PER_OWNER_DAY).toBe(50);
    expect(c.rateLimit.invite).toBe(20);
    expect(config({ INVITE_MAILS_PER_OWNER_DAY: "3", RATE_LIMIT_INVITE: "4" })).toMatchObject({ limits: { INVITE_MAILS_PER_OWNER_DAY: 3 }, rateLimit: { invite: 4 } });
  });

  it("the invitation past the cap → 429 with Retry-After; no invitation row, no mail; another owner still invites", async () => {
    await awaitFreshWindow(DAY, 30);
    const t = await team();
    const limits = capped(2);
    for (let i = 0; i < 2; i++) await invited(await add(limits, t, freshEmail("invitee")));

    const refused = freshEmail("invitee");
    const before = await state(t.app.app_id, refused);
    expect(before.mails).toBe(0);
    await expectDailyCap(await add(limits, t, refused), 2);
    expect(await state(t.app.app_id, refused)).toEqual(before);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM app_invites WHERE app_id = ?1").bind(t.app.app_id).first<number>("n")).toBe(2);

    // Re-inviting an address already invited mails again, so it is refused too, and its link stands.
    const first = (await env.DB.prepare("SELECT email FROM app_invites WHERE app_id = ?1 ORDER BY email LIMIT 1").bind(t.app.app_id).first<string>("email"))!;
    const again = await state(t.app.app_id, first);
    expect(again.mails).toBe(1);
    await expectDailyCap(await add(limits, t, first), 2);
    expect(await state(t.app.app_id, first)).toEqual(again);

    // Another owner, same settings, is unaffected.
    const other = await team();
    const theirs = freshEmail("invitee");
    await invited(await add(limits, other, theirs));
    expect(await mailsTo(theirs)).toBe(1);

    // 0 turns the cap off; a higher cap lets the same day go on.
    await invited(await add(capped(0), t, freshEmail("invitee")));
    await invited(await add(capped(10), t, freshEmail("invitee")));
  });

  it("is the owner's: every app, the agent and the owner's session share it", async () => {
    await awaitFreshWindow(DAY, 30);
    const t = await team();
    const second = await deploy(t.who, { visibility: "private", manifest: rolesManifest() });
    const secondTeam: Team = { ...t, app: second, path: `/v1/apps/${second.app_id}` };
    const limits = capped(2);
    await invited(await add(limits, t, freshEmail("invitee")));
    await invited(await callWith(limits, `${secondTeam.path}/members`, { session: t.who.human.session, json: { email: freshEmail("invitee") } }));

    const email = freshEmail("invitee");
    const before = await state(second.app_id, email);
    await expectDailyCap(await add(limits, secondTeam, email), 2);
    await expectDailyCap(await callWith(limits, `${t.path}/members`, { session: t.who.human.session, json: { email } }), 2);
    expect(await state(second.app_id, email)).toEqual(before);
    expect(await mailsTo(email)).toBe(0);
  });

  it("a notice to an existing account draws on it; over the cap the account is still added, without the mail", async () => {
    await awaitFreshWindow(DAY, 30);
    const t = await team();
    const limits = capped(1);
    const friend = await signIn();
    const mailsBefore = await mailsTo(friend.email);
    expect((await json<{ member: { humanId: string } }>(await add(limits, t, friend.email), 201)).member.humanId).toBe(friend.humanId);
    expect(await mailsTo(friend.email)).toBe(mailsBefore + 1);

    // The notice spent the day's one mail: an invitation is refused ...
    const stranger = freshEmail("invitee");
    await expectDailyCap(await add(limits, t, stranger), 1);
    expect(await mailsTo(stranger)).toBe(0);
    // ... and the next existing account joins, unannounced.
    const second = await signIn();
    const secondBefore = await mailsTo(second.email);
    await json(await add(limits, t, second.email), 201);
    expect(await mailsTo(second.email)).toBe(secondBefore);
    expect((await listMembers(t)).map((m) => m.humanId)).toEqual([t.who.human.humanId, friend.humanId, second.humanId]);
  });

  it("refusals before the mail spend nothing", async () => {
    await awaitFreshWindow(DAY, 30);
    const t = await team();
    const limits = capped(1);
    await expectError(await add(limits, t, t.who.human.email), 409, "conflict");
    await expectError(await callWith(limits, `${t.path}/members`, { key: t.key, json: { email: freshEmail(), custom_roles: ["ghost"] } }), 400, "invalid_request");
    await expectError(await callWith({ ...limits, RELAY_ENV: "production", MAIL: undefined }, `${t.path}/members`, { key: t.key, json: { email: freshEmail() } }), 503, "auth_provider_unavailable");
    await invited(await add(limits, t, freshEmail("invitee")));
    await expectDailyCap(await add(limits, t, freshEmail("invitee")), 1);
  });

  it("the console's add form is held to it: 429 page with Retry-After, nothing recorded", async () => {
    await awaitFreshWindow(DAY, 30);
    const t = await team();
    const limits = capped(1);
    await invited(await add(limits, t, freshEmail("invitee")));
    const email = freshEmail("invitee");
    const before = await state(t.app.app_id, email);
    const res = await callWith(limits, `/console/apps/${t.app.app_id}/members`, {
      method: "POST", session: t.who.human.session,
      body: new URLSearchParams({ email }).toString(), contentType: "application/x-www-form-urlencoded",
    });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await res.text()).toContain("invitation and transfer mails for today");
    expect(await state(t.app.app_id, email)).toEqual(before);
  });
});

describe("the per-address invite bucket", { timeout: 60_000 }, () => {
  it("the add past RATE_LIMIT_INVITE → 429 and nothing recorded; members and transfer offers share it; another address goes on", async () => {
    await awaitFreshWindow();
    const t = await team();
    const ip = freshIp();
    const limits = { RATE_LIMIT_INVITE: "2" };
    await invited(await add(limits, t, freshEmail("invitee"), { ip }));
    // A refused add counts too (a prober pays for every try).
    await expectError(await add(limits, t, t.who.human.email, { ip }), 409, "conflict");

    const email = freshEmail("invitee");
    const before = await state(t.app.app_id, email);
    await expectAddressLimit(await add(limits, t, email, { ip }), 2);
    await expectAddressLimit(await callWith(limits, `${t.path}/transfer`, { key: t.key, ip, json: { email } }), 2);
    expect(await state(t.app.app_id, email)).toEqual(before);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM app_transfers WHERE app_id = ?1").bind(t.app.app_id).first<number>("n")).toBe(0);

    // Reading is not limited; another address still adds.
    await json(await callWith(limits, `${t.path}/members`, { key: t.key, ip }), 200);
    await invited(await add(limits, t, email, { ip: freshIp() }));
    expect(await mailsTo(email)).toBe(1);
  });

  it("the default bucket (20 per minute) leaves ordinary use alone", async () => {
    await awaitFreshWindow();
    const t = await team();
    const ip = freshIp();
    for (let i = 0; i < 20; i++) await invited(await call(`${t.path}/members`, { key: t.key, ip, json: { email: freshEmail("invitee") } }));
    await expectAddressLimit(await call(`${t.path}/members`, { key: t.key, ip, json: { email: freshEmail("invitee") } }), 20);
  });
});
