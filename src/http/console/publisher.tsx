/**
 * The signed-in person's publisher page in the console: their profile (claim the
 * permanent handle; edit display name, bio and web address, a blank field clearing it),
 * every template version they published with its review status and the operator's note,
 * and the reviews of their templates with a form to answer each. Claims, edits and
 * answers go through the same functions as /v1/publisher and /v1/reviews/:id/respond.
 */
import { RelayError } from "../../errors";
import { claimHandle, editProfile, ensurePublisher, HANDLE_PATTERN, profileView, type ProfileEdit, type PublisherProfile } from "../../community/publishers";
import { MAX_REVIEW_BODY, respondToReview } from "../../community/reviews";
import { reviewsOfPublisher, snapshotsOfPublisher } from "../../community/console-publisher";
import type { SnapshotRow } from "../../community/snapshots";
import { meanStars, type TemplateReview } from "../../community/console-gallery";
import type { AppContext, HumanCaller } from "../types";
import { Alert, Flash, When } from "./layout";
import { currentHuman, lookup, readForm, renderPage, seeOther, toSignIn } from "./page";
import type { PageRoute } from "./routes";
import { templatePath } from "./gallery";
import { ratingText, Stars } from "./template-parts";

const PAGE_PATH = "/console/publisher";
/** The profile fields' limits, as POST /v1/publisher/update takes them. */
const PROFILE_LIMITS = { display_name: 80, bio: 500, url: 200 } as const;

const flashes: Record<string, string> = {
  claimed: "Handle claimed. It is yours for good.",
  saved: "Profile saved.",
  responded: "Your answer is shown under the review.",
};

function refuse(message: string, field: string): never {
  throw new RelayError("invalid_request", message, { field });
}

/** One profile field from the form: blank clears it (null), otherwise checked against its limit. */
function profileField(form: URLSearchParams, field: keyof typeof PROFILE_LIMITS): string | null {
  const value = (form.get(field) ?? "").trim();
  if (value === "") return null;
  if (value.length > PROFILE_LIMITS[field]) refuse(`${field.replace("_", " ")} is ${value.length} characters; at most ${PROFILE_LIMITS[field]}.`, field);
  return value;
}

function profileEdit(form: URLSearchParams): ProfileEdit {
  const url = profileField(form, "url");
  if (url !== null && !/^https?:\/\/[^\s/]+\S*$/i.test(url)) refuse("The web address must start with http:// or https://.", "url");
  return { display_name: profileField(form, "display_name"), bio: profileField(form, "bio"), url };
}

function ProfileSection({ profile }: { profile: PublisherProfile }) {
  return (
    <section aria-labelledby="profile-heading">
      <h2 id="profile-heading">Profile</h2>
      <dl class="facts" id="publisher-facts">
        <dt>Handle</dt><dd data-fact="handle">{profile.handle ? `@${profile.handle}` : <span class="muted">not claimed yet</span>}</dd>
        <dt>Trust level</dt><dd data-fact="trust">{profile.trust_level}</dd>
        <dt>Listed templates</dt><dd data-fact="templates">{profile.approved_template_count}</dd>
        <dt>Rating</dt><dd data-fact="rating">{ratingText(meanStars({ count: profile.rating_count, sum: profile.rating_sum }), profile.rating_count)}</dd>
      </dl>
      {profile.handle ? null : (
        <form method="post" action={`${PAGE_PATH}/claim`} id="claim-form">
          <div class="field">
            <label for="claim-handle">Handle (permanent: 3 to 32 lowercase letters, digits or inner hyphens)</label>
            <input type="text" id="claim-handle" name="handle" required pattern={HANDLE_PATTERN.source} />
          </div>
          <button type="submit" class="primary" id="claim">Claim handle</button>
        </form>
      )}
      <form method="post" action={`${PAGE_PATH}/profile`} id="profile-form">
        <div class="field"><label for="display-name">Display name</label><input type="text" id="display-name" name="display_name" value={profile.display_name ?? ""} maxlength={PROFILE_LIMITS.display_name} class="wide" /></div>
        <div class="field"><label for="bio">Bio</label><textarea id="bio" name="bio" rows={3} maxlength={PROFILE_LIMITS.bio} style="width:100%">{profile.bio ?? ""}</textarea></div>
        <div class="field"><label for="website">Web address</label><input type="text" id="website" name="url" value={profile.url ?? ""} maxlength={PROFILE_LIMITS.url} class="wide" /></div>
        <p class="muted">A blank field is cleared.</p>
        <button type="submit" id="save-profile">Save profile</button>
      </form>
    </section>
  );
}

function snapshotState(snapshot: SnapshotRow): string {
  if (snapshot.unpublishedAt) return "unpublished";
  if (snapshot.supersededAt) return "approved, superseded by a newer version";
  return snapshot.reviewStatus;
}

function TemplatesSection({ snapshots, handle }: { snapshots: SnapshotRow[]; handle: string | null }) {
  return (
    <section aria-labelledby="templates-heading">
      <h2 id="templates-heading">Your templates</h2>
      {snapshots.length ? (
        <table id="published-templates" class="records">
          <thead><tr><th scope="col">Template</th><th scope="col">Version</th><th scope="col">Review</th><th scope="col">Published</th></tr></thead>
          <tbody>{snapshots.map((snapshot) => (
            <tr data-snapshot-id={snapshot.id} data-review-status={snapshot.reviewStatus}>
              <th scope="row">{handle && snapshot.slug && snapshot.reviewStatus === "approved" && !snapshot.unpublishedAt && !snapshot.supersededAt
                ? <a href={templatePath(handle, snapshot.slug)}>{snapshot.title}</a> : snapshot.title}
                {snapshot.slug ? <span class="muted"> ({snapshot.slug})</span> : null}</th>
              <td data-label="Version">{snapshot.version}</td>
              <td data-label="Review"><span data-field="state">{snapshotState(snapshot)}</span>{snapshot.reviewNote ? <p class="muted" data-field="review-note">Operator's note: {snapshot.reviewNote}</p> : null}</td>
              <td data-label="Published"><When iso={snapshot.publishedAt} /></td>
            </tr>
          ))}</tbody>
        </table>
      ) : <p id="no-published-templates">You have published nothing yet. Your agent publishes an app with <code>service template publish</code>.</p>}
    </section>
  );
}

function ReviewsSection({ reviews }: { reviews: TemplateReview[] }) {
  return (
    <section aria-labelledby="publisher-reviews-heading">
      <h2 id="publisher-reviews-heading">Reviews of your templates</h2>
      {reviews.length ? (
        <ul id="publisher-reviews">{reviews.map((review) => (
          <li data-review-id={review.id} class="spaced">
            <p><Stars stars={review.stars} /> on <code>{review.templateSlug ?? review.snapshotId}</code> <When iso={review.createdAt} />
              {review.status === "held" ? <span class="muted"> (held for an operator: {review.heldReason ?? "pending check"})</span> : null}</p>
            {review.body ? <p>{review.body}</p> : null}
            <form method="post" action={`${PAGE_PATH}/reviews/${encodeURIComponent(review.id)}/respond`}>
              <label for={`response-${review.id}`}>Your answer (blank removes it)</label>
              <textarea id={`response-${review.id}`} name="response" rows={2} maxlength={MAX_REVIEW_BODY} style="width:100%">{review.publisherResponse ?? ""}</textarea>
              <button type="submit" data-action="respond">Answer<span class="vh"> this review</span></button>
            </form>
          </li>
        ))}</ul>
      ) : <p id="no-publisher-reviews">No reviews yet.</p>}
    </section>
  );
}

async function publisherPage(c: AppContext, human: HumanCaller, error: string | null = null, status = 200): Promise<Response> {
  const publisher = await ensurePublisher(c.env, human.humanId);
  const [profile, snapshots, reviews] = await Promise.all([
    profileView(c.env, publisher), snapshotsOfPublisher(c.env, human.humanId), reviewsOfPublisher(c.env, human.humanId),
  ]);
  return renderPage(c, status, "Publisher", (
    <>
      <Flash text={lookup(flashes, c.req.query("flash"))} />
      <Alert text={error} />
      <ProfileSection profile={profile} />
      <TemplatesSection snapshots={snapshots} handle={profile.handle} />
      <ReviewsSection reviews={reviews} />
    </>
  ), {});
}

/** A signed-in form post: runs `act`, then back to the page with `flash`; a catalogue refusal re-renders the page with its message. */
function formAction(act: (c: AppContext, human: HumanCaller, form: URLSearchParams) => Promise<unknown>, flash: string) {
  return async (c: AppContext): Promise<Response> => {
    const human = await currentHuman(c);
    if (!human) return toSignIn(c, PAGE_PATH);
    const form = await readForm(c);
    try {
      await act(c, human, form);
    } catch (err) {
      if (!(err instanceof RelayError) || err.status >= 500) throw err;
      return publisherPage(c, human, err.message, err.status);
    }
    return seeOther(c, `${PAGE_PATH}?flash=${flash}`);
  };
}

async function show(c: AppContext): Promise<Response> {
  const human = await currentHuman(c);
  if (!human) return toSignIn(c, PAGE_PATH);
  return publisherPage(c, human);
}

export function publisherPages(route: PageRoute): void {
  route("get", PAGE_PATH, show);
  route("post", `${PAGE_PATH}/claim`, formAction(async (c, human, form) => {
    const handle = (form.get("handle") ?? "").trim();
    if (!HANDLE_PATTERN.test(handle)) refuse("A handle is 3 to 32 lowercase letters, digits or inner hyphens.", "handle");
    await claimHandle(c.env, human.humanId, handle);
  }, "claimed"));
  route("post", `${PAGE_PATH}/profile`, formAction((c, human, form) => editProfile(c.env, human.humanId, profileEdit(form)), "saved"));
  route("post", `${PAGE_PATH}/reviews/:id/respond`, formAction(async (c, human, form) => {
    const response = (form.get("response") ?? "").trim();
    if (response.length > MAX_REVIEW_BODY) refuse(`The answer is ${response.length} characters; at most ${MAX_REVIEW_BODY}.`, "response");
    await respondToReview(c.env, human.humanId, c.req.param("id")!, response === "" ? null : response);
  }, "responded"));
}
