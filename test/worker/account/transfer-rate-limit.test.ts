// Ownership-transfer offers under the limits on mail to other people (issue 5): an offer
// draws on the owner's daily budget shared with member invitations
// (INVITE_MAILS_PER_OWNER_DAY); past it the offer is 429 rate_limited with Retry-After and
// nothing is recorded or mailed; another owner offers as usual; a refused offer (conflict)
// spends nothing. The per-address bucket shared with adding members is in
// test/worker/members/rate-limit.test.ts.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { awaitFreshWindow, callWith, expectError, freshEmail, json } from "../helpers";
import { mailCount, setup, state, type Setup, type TransferBody } from "./fixtures";

const DAY = 86_400;

function offerWith(limits: Record<string, string>, s: Setup, email: string): Promise<Response> {
  return callWith(limits, `${s.path}/transfer`, { key: s.key, json: { email } });
}

async function expectDailyCap(res: Response, limit: number): Promise<void> {
  const retryAfter = Number(res.headers.get("retry-after"));
  const err = await expectError(res, 429, "rate_limited");
  expect(err.retryable).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(DAY);
  expect(err.details).toEqual({ retry_after: retryAfter, limit, per: "owner", window: "day" });
  expect(err.message).toContain("transfer offer");
}

describe("transfer offers and the owner's daily mail cap", { timeout: 60_000 }, () => {
  it("an offer past the cap → 429 with Retry-After; no offer, no mail; another owner still offers", async () => {
    await awaitFreshWindow(DAY, 30);
    const s = await setup();
    const limits = { INVITE_MAILS_PER_OWNER_DAY: "2" };
    // One invitation and one offer (then withdrawn) spend the day's two mails.
    await json(await callWith(limits, `${s.path}/members`, { key: s.key, json: { email: freshEmail("invitee") } }), 200);
    await json<{ transfer: TransferBody }>(await offerWith(limits, s, freshEmail("first")), 201);
    await json(await callWith(limits, `${s.path}/transfer`, { method: "DELETE", key: s.key }), 200);

    const to = freshEmail("recipient");
    const before = await state(s.app.app_id, to);
    await expectDailyCap(await offerWith(limits, s, to), 2);
    expect(await state(s.app.app_id, to)).toEqual(before);
    expect(await mailCount(to)).toBe(0);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM app_transfers WHERE app_id = ?1 AND status = 'pending'").bind(s.app.app_id).first<number>("n")).toBe(0);

    // Another owner, same settings.
    const other = await setup();
    const theirs = freshEmail("recipient");
    await json(await offerWith(limits, other, theirs), 201);
    expect(await mailCount(theirs)).toBe(1);
  });

  it("a refused offer spends nothing: a pending offer's conflict leaves the budget for the next one", async () => {
    await awaitFreshWindow(DAY, 30);
    const s = await setup();
    const limits = { INVITE_MAILS_PER_OWNER_DAY: "1" };
    await expectError(await offerWith(limits, s, s.who.human.email), 409, "conflict");
    await json(await offerWith(limits, s, freshEmail("recipient")), 201);
    await expectError(await offerWith(limits, s, freshEmail("recipient")), 409, "conflict");
    await json(await callWith(limits, `${s.path}/transfer`, { method: "DELETE", key: s.key }), 200);
    await expectDailyCap(await offerWith(limits, s, freshEmail("recipient")), 1);
  });
});
