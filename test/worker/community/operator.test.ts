// The operator's review (WIRE §2.10, spec B's OP): the pending queue (expedited first,
// then oldest first, a page at a time), one submission whole, approve (earlier approved
// versions of the slug superseded), reject with a note that reaches the publisher as an
// in-app notice on the source app, the publisher's own unpublish (404 for anyone else,
// idempotent), and every operator route refused with not_a_reviewer to anyone else.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectError, json } from "../helpers";
import { asOperator, person, publish, todoPublisher, withOperatorsSet, type Obj } from "./helpers";

type Answer = { snapshot_id: string; review_status: string; expedited: boolean };
type Summary = Obj & { snapshot_id: string; expedited: boolean; published_at: string };
type Page = { items: Summary[]; next_cursor: string | null };
type Detail = Obj & { review_status: string; review_note: string | null; superseded_at: string | null; unpublished_at: string | null };

/** The whole queue, page by page, keeping only the given snapshots (other tests add their own). */
async function queueOf(operator: Awaited<ReturnType<typeof person>>, ids: Set<string>, limit = 2): Promise<Summary[]> {
  const found: Summary[] = [];
  let cursor: string | null = null;
  do {
    const query: string = `?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
    const page: Page = await json<Page>(await asOperator(operator, `/v1/community/pending${query}`), 200);
    expect(page.items.length).toBeLessThanOrEqual(limit);
    found.push(...page.items.filter((item) => ids.has(item.snapshot_id)));
    cursor = page.next_cursor;
  } while (cursor !== null);
  return found;
}

describe("operator review", { timeout: 60_000 }, () => {
  it("queues expedited first, approves, supersedes, rejects with a note and lets the publisher unpublish", async () => {
    const operator = await person("operator");
    const { owner, appId } = await todoPublisher();
    const slug = `todo-${crypto.randomUUID().slice(0, 6)}`;
    const first = await json<Answer>(await publish(owner, { app_id: appId, slug, attest_example_only: true }), 201);
    const other = await json<Answer>(await publish(owner, { app_id: appId, title: "Another" }), 201);

    // Approve 1.0.0; a republish of the listed slug is then expedited and queues ahead.
    const approved = await json<Detail>(await asOperator(operator, `/v1/community/submissions/${first.snapshot_id}/approve`, { method: "POST" }), 200);
    expect(approved).toMatchObject({ review_status: "approved", review_note: null, superseded_at: null });
    expect(typeof approved.reviewed_at).toBe("string");
    const again = await json<Detail>(await asOperator(operator, `/v1/community/submissions/${first.snapshot_id}/approve`, { method: "POST" }), 200);
    expect(again.reviewed_at).toBe(approved.reviewed_at);
    const update = await json<Answer>(await publish(owner, { app_id: appId, slug, version: "1.1.0" }), 201);
    expect(update).toMatchObject({ review_status: "pending", expedited: true });

    const queue = await queueOf(operator, new Set([first.snapshot_id, other.snapshot_id, update.snapshot_id]));
    expect(queue.map((item) => item.snapshot_id)).toEqual([update.snapshot_id, other.snapshot_id]);
    expect(queue[0]).toMatchObject({ expedited: true, version: "1.1.0", publisher_human_id: owner.human.humanId, publisher_trust_level: "new" });

    await json(await asOperator(operator, `/v1/community/submissions/${update.snapshot_id}/approve`, { method: "POST" }), 200);
    const older = await json<Detail>(await asOperator(operator, `/v1/community/submissions/${first.snapshot_id}`), 200);
    expect(typeof older.superseded_at).toBe("string");
    const profile = await json<Obj>(await call("/v1/publisher", { key: owner.key }), 200);
    expect(profile).toMatchObject({ approved_template_count: 1 });
    expect(typeof profile.first_published_at).toBe("string");

    // Reject: a note is required; it reaches the publisher on the source app.
    await expectError(await asOperator(operator, `/v1/community/submissions/${other.snapshot_id}/reject`, { json: {} }), 400, "invalid_request");
    await expectError(await asOperator(operator, `/v1/community/submissions/${other.snapshot_id}/reject`, { json: { note: "   " } }), 400, "invalid_request");
    const rejected = await json<Detail>(await asOperator(operator, `/v1/community/submissions/${other.snapshot_id}/reject`, { json: { note: "Please add a description." } }), 200);
    expect(rejected).toMatchObject({ review_status: "rejected", review_note: "Please add a description." });
    const notice = await env.DB.prepare("SELECT * FROM notifications WHERE app_id = ?1 AND row_key = ?2").bind(appId, other.snapshot_id).first<Obj>();
    expect(notice).toMatchObject({ channel: "inapp", human_id: owner.human.humanId, body: "Please add a description.", status: "sent" });
    expect((await queueOf(operator, new Set([other.snapshot_id]))).length).toBe(0);

    // Unpublish: own only (404 for anyone else), idempotent; a withdrawn submission cannot be approved.
    const stranger = await person();
    await expectError(await call(`/v1/community/submissions/${update.snapshot_id}/unpublish`, { key: stranger.key, method: "POST" }), 404, "submission_not_found");
    await expectError(await call("/v1/community/submissions/tpl_missing/unpublish", { key: owner.key, method: "POST" }), 404, "submission_not_found");
    const down = await json<Detail>(await call(`/v1/community/submissions/${update.snapshot_id}/unpublish`, { key: owner.key, method: "POST" }), 200);
    expect(typeof down.unpublished_at).toBe("string");
    const downAgain = await json<Detail>(await call(`/v1/community/submissions/${update.snapshot_id}/unpublish`, { key: owner.key, method: "POST" }), 200);
    expect(downAgain.unpublished_at).toBe(down.unpublished_at);
    await expectError(await asOperator(operator, `/v1/community/submissions/${update.snapshot_id}/approve`, { method: "POST" }), 409, "conflict");
    expect((await json<Obj>(await call("/v1/publisher", { key: owner.key }), 200)).approved_template_count).toBe(0);

    await expectError(await asOperator(operator, "/v1/community/submissions/tpl_missing"), 404, "submission_not_found");
    await expectError(await asOperator(operator, "/v1/community/pending?cursor=not-ours"), 400, "invalid_request");
    await expectError(await asOperator(operator, "/v1/community/pending?limit=0"), 400, "invalid_request");
  });

  it("lists only the newest approved version when an older one is approved after it", async () => {
    const operator = await person("operator");
    const { owner, appId } = await todoPublisher();
    const older = await json<Answer>(await publish(owner, { app_id: appId, slug: "late-review", version: "1.0.0" }), 201);
    const newer = await json<Answer>(await publish(owner, { app_id: appId, slug: "late-review", version: "2.0.0" }), 201);
    await json(await asOperator(operator, `/v1/community/submissions/${newer.snapshot_id}/approve`, { method: "POST" }), 200);
    const late = await json<Detail>(await asOperator(operator, `/v1/community/submissions/${older.snapshot_id}/approve`, { method: "POST" }), 200);
    expect(late.review_status).toBe("approved");
    expect(typeof late.superseded_at).toBe("string");
    expect((await json<Detail>(await asOperator(operator, `/v1/community/submissions/${newer.snapshot_id}`), 200)).superseded_at).toBeNull();
    expect((await json<Obj>(await call("/v1/publisher", { key: owner.key }), 200)).approved_template_count).toBe(1);
  });

  it("refuses every operator route to anyone not on the list, changing nothing", async () => {
    const operator = await person("operator");
    const { owner, appId } = await todoPublisher();
    await json(await call("/v1/publisher/claim", { key: owner.key, json: { handle: `pub-${crypto.randomUUID().slice(0, 8)}` } }), 200);
    const handle = (await json<{ handle: string }>(await call("/v1/publisher", { key: owner.key }), 200)).handle;
    const answer = await json<Answer>(await publish(owner, { app_id: appId }), 201);
    const routes: [string, Obj][] = [
      ["/v1/community/pending", {}],
      [`/v1/community/submissions/${answer.snapshot_id}`, {}],
      [`/v1/community/submissions/${answer.snapshot_id}/approve`, { method: "POST" }],
      [`/v1/community/submissions/${answer.snapshot_id}/reject`, { json: { note: "no" } }],
      [`/v1/community/publishers/${handle}/trust`, { json: { trust_level: "established" } }],
    ];
    for (const [path, opts] of routes) {
      await expectError(await withOperatorsSet(operator, owner, path, opts), 403, "not_a_reviewer");
      await expectError(await call(path, { key: operator.key, ...opts }), 403, "not_a_reviewer");
    }
    // An operator whose email is no longer verified is no operator.
    await env.DB.prepare("UPDATE humans SET email_verified_at = NULL WHERE id = ?1").bind(operator.human.humanId).run();
    await expectError(await asOperator(operator, "/v1/community/pending"), 403, "not_a_reviewer");
    const stored = await env.DB.prepare("SELECT review_status FROM template_snapshots WHERE id = ?1").bind(answer.snapshot_id).first<{ review_status: string }>();
    expect(stored?.review_status).toBe("pending");
    expect((await json<Obj>(await call("/v1/publisher", { key: owner.key }), 200)).trust_level).toBe("new");
  });
});
