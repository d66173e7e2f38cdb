/**
 * The community operator's review queue in the console: pending submissions (expedited
 * first, a page at a time), one submission whole (its facts, what its manifest asks for,
 * the manifest itself, the HTML document as escaped source, the example rows, where its
 * data can go, its setup steps) and Approve / Reject-with-a-note buttons that call the same
 * review functions as the operator's API routes. Only humans on
 * COMMUNITY_REVIEW_OPERATOR_EMAILS see any of it; everyone else gets not_a_reviewer.
 * The queue page also lists reviews held for an operator, with Release and Remove.
 */
import { config } from "../../config";
import { RelayError } from "../../errors";
import { isOperatorEmail } from "../../community/callers";
import { approveSubmission, pendingQueue, rejectSubmission, submissionById } from "../../community/review";
import { detailOf, type SubmissionDetail, type SubmissionSummary } from "../../community/submission-views";
import { removeReview, unholdReview } from "../../community/reviews";
import { heldReviews, type TemplateReview } from "../../community/console-gallery";
import type { AppContext, HumanCaller } from "../types";
import { Alert, Flash, When } from "./layout";
import { currentHuman, lookup, readForm, renderPage, seeOther, toSignIn } from "./page";
import type { PageRoute } from "./routes";
import { Destinations, SeedRowsView, SetupSteps, Stars, templateDisclosure, WhatItAsks } from "./template-parts";

const QUEUE_PAGE = 25;
/** The longest rejection note, as POST /v1/community/submissions/:id/reject takes it. */
const MAX_REVIEW_NOTE = 2000;
const MAX_CURSOR_CHARS = 500;

const flashes: Record<string, string> = {
  approved: "Approved: the template is listed in the gallery.",
  rejected: "Rejected: the publisher gets your note on their app.",
  released: "Released: the review is visible.",
  removed: "Removed: the review is gone from the gallery and the rating.",
};

function HeldReviews({ reviews }: { reviews: TemplateReview[] }) {
  return (
    <section aria-labelledby="held-heading">
      <h2 id="held-heading">Held reviews</h2>
      {reviews.length ? (
        <ul id="held-reviews">{reviews.map((review) => (
          <li data-review-id={review.id} class="spaced">
            <p><Stars stars={review.stars} /> on <code>{review.templateSlug ?? review.snapshotId}</code> <When iso={review.createdAt} /> <span class="muted">({review.heldReason ?? "held"})</span></p>
            {review.body ? <p>{review.body}</p> : null}
            <div class="actions">
              <form method="post" action={`/console/review/reviews/${encodeURIComponent(review.id)}/unhold`}><button type="submit" data-action="unhold">Release<span class="vh"> this review</span></button></form>
              <form method="post" action={`/console/review/reviews/${encodeURIComponent(review.id)}/remove`}><button type="submit" class="danger" data-action="remove">Remove<span class="vh"> this review</span></button></form>
            </div>
          </li>
        ))}</ul>
      ) : <p id="no-held-reviews">No review is held.</p>}
    </section>
  );
}

function submissionPath(snapshotId: string, suffix = ""): string {
  return `/console/review/${encodeURIComponent(snapshotId)}${suffix}`;
}

/** The signed-in operator, or a redirect to sign in; anyone else is refused with not_a_reviewer. */
async function operator(c: AppContext, returnTo: string): Promise<HumanCaller | Response> {
  const human = await currentHuman(c);
  if (!human) return toSignIn(c, returnTo);
  if (!isOperatorEmail(c.env, human.email)) throw new RelayError("not_a_reviewer", "Only the relay's community operators may review templates.");
  return human;
}

function QueueTable({ items }: { items: SubmissionSummary[] }) {
  if (!items.length) return <p id="queue-empty">Nothing is waiting for review.</p>;
  return (
    <table id="pending-submissions" class="records">
      <thead><tr><th scope="col">Template</th><th scope="col">Publisher</th><th scope="col">Version</th><th scope="col">Example rows</th><th scope="col">Published</th></tr></thead>
      <tbody>{items.map((item) => (
        <tr data-snapshot-id={item.snapshot_id} data-expedited={String(item.expedited)}>
          <th scope="row"><a href={submissionPath(item.snapshot_id)}>{item.name}</a>{item.expedited ? <span class="muted"> (expedited: an earlier version was approved)</span> : null}</th>
          <td data-label="Publisher">{item.publisher_name ?? <span class="muted">no handle yet</span>} <span class="muted">({item.publisher_trust_level})</span></td>
          <td data-label="Version">{item.slug ? `${item.slug} ` : ""}{item.version}</td>
          <td data-label="Example rows">{item.seeded_row_count}</td>
          <td data-label="Published"><When iso={item.published_at} /></td>
        </tr>
      ))}</tbody>
    </table>
  );
}

async function queue(c: AppContext): Promise<Response> {
  const who = await operator(c, "/console/review");
  if (who instanceof Response) return who;
  const cursor = c.req.query("cursor");
  if (cursor !== undefined && (cursor === "" || cursor.length > MAX_CURSOR_CHARS)) throw new RelayError("invalid_request", "That page link is damaged; start from the first page.", { field: "cursor" });
  const [page, held] = await Promise.all([pendingQueue(c.env, QUEUE_PAGE, cursor), heldReviews(c.env)]);
  return renderPage(c, 200, "Review queue", (
    <>
      <Flash text={lookup(flashes, c.req.query("flash"))} />
      <p>Templates waiting for an operator, expedited ones (a new version of an approved template) first, then oldest first.</p>
      <QueueTable items={page.items} />
      {page.next_cursor ? <p class="pager"><a href={`/console/review?cursor=${encodeURIComponent(page.next_cursor)}`} id="next-page" rel="next">Next page</a></p> : null}
      <HeldReviews reviews={held} />
    </>
  ));
}

function Facts({ detail }: { detail: SubmissionDetail }) {
  const rows: Array<[string, string, unknown]> = [
    ["status", "Status", detail.review_status], ["publisher", "Publisher", `${detail.publisher_name ?? "no handle yet"} (${detail.publisher_trust_level})`],
    ["slug", "Slug", detail.slug ?? "none"], ["version", "Version", detail.version], ["category", "Category", detail.category ?? "none"],
    ["tags", "Tags", detail.tags.join(", ") || "none"], ["attested", "Rows attested as example data", detail.attest_example_only ? "yes" : "no"],
    ["source-app", "Published from app", detail.source_app_id], ["changelog", "Changelog", detail.changelog ?? "none"],
  ];
  return (
    <dl class="facts" id="submission-facts">
      {rows.map(([name, label, value]) => <><dt>{label}</dt><dd data-fact={name}>{String(value)}</dd></>)}
      <dt>Published</dt><dd data-fact="published"><When iso={detail.published_at} /></dd>
      {detail.review_note ? <><dt>Review note</dt><dd data-fact="review-note">{detail.review_note}</dd></> : null}
    </dl>
  );
}

function Decision({ detail, error, note }: { detail: SubmissionDetail; error: string | null; note: string }) {
  if (detail.unpublished_at) return <p class="note" id="withdrawn">The publisher withdrew this submission on <When iso={detail.unpublished_at} />.</p>;
  return (
    <section aria-labelledby="decision-heading">
      <h2 id="decision-heading">Decision</h2>
      <Alert text={error} />
      <div class="actions">
        {detail.review_status === "approved" ? <p id="already-approved">Approved and listed.</p> : (
          <form method="post" action={submissionPath(detail.snapshot_id, "/approve")}>
            <button type="submit" class="primary" id="approve">Approve</button>
          </form>
        )}
      </div>
      <form method="post" action={submissionPath(detail.snapshot_id, "/reject")} id="reject-form">
        <div class="field">
          <label for="reject-note">Why not (the publisher reads this)</label>
          <textarea id="reject-note" name="note" rows={3} required maxlength={MAX_REVIEW_NOTE} style="width:100%">{note}</textarea>
        </div>
        <button type="submit" class="danger" id="reject">Reject</button>
      </form>
    </section>
  );
}

async function submissionPage(c: AppContext, detail: SubmissionDetail, decision: { error: string | null; note: string }, status = 200): Promise<Response> {
  return renderPage(c, status, `Review: ${detail.name} ${detail.version}`, (
    <>
      <Flash text={lookup(flashes, c.req.query("flash"))} />
      <p><a href="/console/review">Back to the queue</a></p>
      {detail.description ? <p id="submission-description">{detail.description}</p> : null}
      {detail.long_description ? <p style="white-space: pre-wrap">{detail.long_description}</p> : null}
      <Facts detail={detail} />
      <Decision detail={detail} error={decision.error} note={decision.note} />
      <WhatItAsks told={templateDisclosure(detail.manifest, config(c.env))} />
      <Destinations list={detail.external_destinations} />
      <SeedRowsView rows={detail.seed_rows} />
      <SetupSteps steps={detail.setup_steps} />
      <section aria-labelledby="html-heading">
        <h2 id="html-heading">HTML document</h2>
        <p class="muted">Shown as source, never run here.</p>
        <pre id="submission-html"><code>{detail.html}</code></pre>
      </section>
      <section aria-labelledby="manifest-heading">
        <h2 id="manifest-heading">Manifest</h2>
        <pre id="submission-manifest"><code>{JSON.stringify(detail.manifest, null, 2)}</code></pre>
      </section>
    </>
  ));
}

async function showSubmission(c: AppContext): Promise<Response> {
  const id = c.req.param("id")!;
  const who = await operator(c, submissionPath(id));
  if (who instanceof Response) return who;
  return submissionPage(c, await detailOf(c.env, await submissionById(c.env, id)), { error: null, note: "" });
}

async function approve(c: AppContext): Promise<Response> {
  const id = c.req.param("id")!;
  const who = await operator(c, submissionPath(id));
  if (who instanceof Response) return who;
  await approveSubmission(c.env, id, who.humanId);
  return seeOther(c, submissionPath(id, "?flash=approved"));
}

async function reject(c: AppContext): Promise<Response> {
  const id = c.req.param("id")!;
  const who = await operator(c, submissionPath(id));
  if (who instanceof Response) return who;
  const snapshot = await submissionById(c.env, id);
  const note = ((await readForm(c)).get("note") ?? "").trim();
  if (!note || note.length > MAX_REVIEW_NOTE) {
    const error = note ? `The note is ${note.length} characters; at most ${MAX_REVIEW_NOTE}.` : "A rejection needs a note saying why; the publisher reads it.";
    return submissionPage(c, await detailOf(c.env, snapshot), { error, note: note.slice(0, MAX_REVIEW_NOTE) }, 400);
  }
  await rejectSubmission(c.env, id, who.humanId, note);
  return seeOther(c, submissionPath(id, "?flash=rejected"));
}

/** Release or remove a held review, as POST /v1/reviews/:id/unhold|remove do. */
function moderate(act: (env: Env, id: string) => Promise<unknown>, flash: string) {
  return async (c: AppContext): Promise<Response> => {
    const who = await operator(c, "/console/review");
    if (who instanceof Response) return who;
    await act(c.env, c.req.param("id")!);
    return seeOther(c, `/console/review?flash=${flash}`);
  };
}

export function reviewPages(route: PageRoute): void {
  route("get", "/console/review", queue);
  route("get", "/console/review/:id", showSubmission);
  route("post", "/console/review/:id/approve", approve);
  route("post", "/console/review/:id/reject", reject);
  route("post", "/console/review/reviews/:id/unhold", moderate(unholdReview, "released"));
  route("post", "/console/review/reviews/:id/remove", moderate(removeReview, "removed"));
}
