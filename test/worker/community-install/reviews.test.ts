// Reviews of community templates (WIRE §2.10 Review): only installers, with a verified
// email, one per install; a body with a link or an email address is held; the template's
// publisher answers (null clears); one report per account; operators remove and unhold;
// the publisher profile's rating_count and rating_sum count visible reviews only; deleting
// an account deletes the reviews and reports it wrote.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectError, json } from "../helpers";
import { asOperator, person } from "../community/helpers";
import { form, mailedToken } from "../account/fixtures";
import { installer, listTemplate, publisher, type Publisher } from "./fixtures";

type Obj = Record<string, unknown>;

async function installedBy(pub: Publisher) {
  const me = await installer();
  await json(await call(`/v1/community/templates/${pub.handle}/todo/install`, { key: me.agent.api_key, json: { config: { greeting: "Hi" } } }), 201);
  return me;
}

describe("reviews", () => {
  it("an installer reviews once per install; held bodies; refusals change nothing; the profile's rating counts visible reviews", async () => {
    const pub = await publisher();
    const snapshotId = await listTemplate(pub);
    const me = await installedBy(pub);
    const key = me.agent.api_key;
    const review = await json<Obj>(await call("/v1/reviews", { key, json: { template: `${pub.handle}/todo`, stars: 4, body: "  Works well  " } }), 201);
    expect(review).toEqual({
      id: expect.stringMatching(/^rev_/), template_publisher_human_id: pub.human.humanId, template_slug: "todo", snapshot_id: snapshotId,
      install_id: expect.stringMatching(/^inst_/), reviewer_human_id: me.human.humanId, stars: 4, body: "Works well", status: "visible",
      held_reason: null, publisher_response: null, publisher_responded_at: null, created_at: expect.any(String),
    });
    await expectError(await call("/v1/reviews", { key, json: { handle: pub.handle, slug: "todo", stars: 5 } }), 409, "conflict");
    // A second install takes a second review; a link in the body holds it.
    await json(await call(`/v1/community/templates/${pub.handle}/todo/install`, { key, json: { config: { greeting: "Again" } } }), 201);
    const held = await json<Obj>(await call("/v1/reviews", { key, json: { handle: pub.handle, slug: "todo", stars: 1, body: "see https://spam.example" } }), 201);
    expect(held).toMatchObject({ status: "held", held_reason: "contains a link", stars: 1 });

    const other = await installedBy(pub);
    const mailed = await json<Obj>(await call("/v1/reviews", { key: other.agent.api_key, json: { template: `${pub.handle}/todo`, stars: 2, body: "write me at a@b.example" } }), 201);
    expect(mailed).toMatchObject({ status: "held", held_reason: "contains an email address" });

    const before = await env.DB.prepare("SELECT count(*) AS n FROM template_reviews").first("n");
    const stranger = await installer();
    await expectError(await call("/v1/reviews", { key: stranger.agent.api_key, json: { template: `${pub.handle}/todo`, stars: 5 } }), 403, "forbidden");
    for (const body of [
      { template: `${pub.handle}/todo`, stars: 0 }, { template: `${pub.handle}/todo`, stars: 6 }, { template: `${pub.handle}/todo`, stars: "4" },
      { template: `${pub.handle}/todo`, stars: 3, body: "x".repeat(2001) }, { template: `${pub.handle}/todo`, handle: pub.handle, stars: 3 },
      { template: "no-slash", stars: 3 }, { stars: 3 }, { template: `${pub.handle}/todo`, stars: 3, extra: 1 },
    ]) {
      await expectError(await call("/v1/reviews", { key: other.agent.api_key, json: body }), 400, "invalid_request");
    }
    const unverified = await installedBy(pub);
    await env.DB.prepare("UPDATE humans SET email_verified_at = NULL WHERE id = ?1").bind(unverified.human.humanId).run();
    await expectError(await call("/v1/reviews", { key: unverified.agent.api_key, json: { template: `${pub.handle}/todo`, stars: 5 } }), 403, "email_not_verified");
    expect(await env.DB.prepare("SELECT count(*) AS n FROM template_reviews").first("n")).toBe(before);

    const profile = await json<Obj>(await call("/v1/publisher", { key: pub.agent.api_key }), 200);
    expect(profile).toMatchObject({ rating_count: 1, rating_sum: 4 });
  });

  it("the publisher responds (null clears); only the publisher; reports once per account; operators remove and unhold", async () => {
    const pub = await publisher();
    await listTemplate(pub);
    const me = await installedBy(pub);
    const review = await json<{ id: string }>(await call("/v1/reviews", { key: me.agent.api_key, json: { template: `${pub.handle}/todo`, stars: 3, body: "ok, mail x@y.example" } }), 201);
    const path = `/v1/reviews/${review.id}`;

    const answered = await json<Obj>(await call(`${path}/respond`, { key: pub.agent.api_key, json: { response: "Thanks!" } }), 200);
    expect(answered).toMatchObject({ publisher_response: "Thanks!", publisher_responded_at: expect.any(String) });
    expect(await json<Obj>(await call(`${path}/respond`, { key: pub.agent.api_key, json: { response: null } }), 200)).toMatchObject({ publisher_response: null, publisher_responded_at: null });
    await expectError(await call(`${path}/respond`, { key: me.agent.api_key, json: { response: "me too" } }), 403, "forbidden");
    await expectError(await call(`${path}/respond`, { key: pub.agent.api_key, json: {} }), 400, "invalid_request");
    await expectError(await call("/v1/reviews/rev_nope/respond", { key: pub.agent.api_key, json: { response: "x" } }), 404, "review_not_found");

    const reporter = await installer();
    const first = await json<{ report_id: string; review_id: string }>(await call(`${path}/report`, { key: reporter.agent.api_key, json: { reason: "spam" } }), 200);
    expect(first.review_id).toBe(review.id);
    expect(await json(await call(`${path}/report`, { key: reporter.agent.api_key, json: { reason: "again" } }), 200)).toEqual(first);
    await expectError(await call(`${path}/report`, { key: reporter.agent.api_key, json: { reason: " " } }), 400, "invalid_request");
    expect(await env.DB.prepare("SELECT count(*) AS n FROM review_reports WHERE review_id = ?1").bind(review.id).first("n")).toBe(1);

    // Operators only: anyone else is not_a_reviewer.
    await expectError(await call(`${path}/unhold`, { key: pub.agent.api_key, json: {} }), 403, "not_a_reviewer");
    await expectError(await call(`${path}/remove`, { key: me.agent.api_key, method: "POST" }), 403, "not_a_reviewer");
    const operator = await person("operator");
    expect(await json<Obj>(await call("/v1/publisher", { key: pub.agent.api_key }), 200)).toMatchObject({ rating_count: 0, rating_sum: 0 });
    expect(await json<Obj>(await asOperator(operator, `${path}/unhold`, { method: "POST" }), 200)).toMatchObject({ status: "visible" });
    expect(await json<Obj>(await call("/v1/publisher", { key: pub.agent.api_key }), 200)).toMatchObject({ rating_count: 1, rating_sum: 3 });
    expect(await json<Obj>(await asOperator(operator, `${path}/remove`, { method: "POST" }), 200)).toMatchObject({ status: "removed" });
    expect(await json<Obj>(await asOperator(operator, `${path}/remove`, { method: "POST" }), 200)).toMatchObject({ status: "removed" });
    await expectError(await asOperator(operator, `${path}/unhold`, { method: "POST" }), 409, "conflict");
    await expectError(await call(`${path}/respond`, { key: pub.agent.api_key, json: { response: "x" } }), 404, "review_not_found");
    expect(await json<Obj>(await call("/v1/publisher", { key: pub.agent.api_key }), 200)).toMatchObject({ rating_count: 0, rating_sum: 0 });
  });

  it("a deleted account takes its reviews and reports with it, and the rating forgets them", async () => {
    const pub = await publisher();
    await listTemplate(pub);
    const me = await installedBy(pub);
    const review = await json<{ id: string }>(await call("/v1/reviews", { key: me.agent.api_key, json: { template: `${pub.handle}/todo`, stars: 5 } }), 201);
    await json(await call(`/v1/reviews/${review.id}/report`, { key: me.agent.api_key, json: { reason: "my own" } }), 200);
    expect(await json<Obj>(await call("/v1/publisher", { key: pub.agent.api_key }), 200)).toMatchObject({ rating_count: 1, rating_sum: 5 });
    await json(await call("/v1/self", { method: "DELETE", session: me.human.session }), 202);
    const token = await mailedToken(me.human.email, "account/delete");
    expect((await call("/account/delete", { method: "POST", session: me.human.session, ...form([["token", token]]) })).status).toBe(200);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM template_reviews WHERE reviewer_human_id = ?1").bind(me.human.humanId).first("n")).toBe(0);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM review_reports WHERE reporter_human_id = ?1").bind(me.human.humanId).first("n")).toBe(0);
    expect(await json<Obj>(await call("/v1/publisher", { key: pub.agent.api_key }), 200)).toMatchObject({ rating_count: 0, rating_sum: 0 });
  });
});
