/**
 * Star reviews of community templates (WIRE §2.10 Review): only a person who installed
 * the template may review it, once per install, with a verified email; a body carrying a
 * link or an email address is held for an operator instead of shown. The template's
 * publisher may answer (null clears the answer); anyone may report a review once; the
 * operators remove or release held ones. A publisher's rating is the count and sum of
 * the visible reviews of their templates.
 */
import { and, count, desc, eq, sum } from "drizzle-orm";
import { RelayError } from "../errors";
import { db } from "../db/client";
import { reviewReports, templateInstalls, templateReviews } from "../db/community-installs-schema";
import { newId, nowIso } from "../auth/tokens";
import type { HumanRow } from "../db/humans";
import { publisherByHandle } from "./snapshots";

type Env = { DB: D1Database };
export type ReviewRow = typeof templateReviews.$inferSelect;

export const MAX_REVIEW_BODY = 2000;
export const MAX_REPORT_REASON = 500;

/** The Review shape of WIRE §2.10. */
export function reviewView(row: ReviewRow) {
  return {
    id: row.id, template_publisher_human_id: row.templatePublisherHumanId, template_slug: row.templateSlug, snapshot_id: row.snapshotId,
    install_id: row.installId, reviewer_human_id: row.reviewerHumanId, stars: row.stars, body: row.body, status: row.status,
    held_reason: row.heldReason, publisher_response: row.publisherResponse, publisher_responded_at: row.publisherRespondedAt, created_at: row.createdAt,
  };
}

const LINK = /\b(?:https?:\/\/|www\.)\S|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|net|org|io|dev|app|co|me|info|biz|xyz|ly|gg)\b/i;
const EMAIL = /[^\s@<>()]+@[^\s@<>()]+\.[a-z]{2,}/i;

/** Why a review body is held for an operator, or null when it may be shown. */
export function holdReason(body: string | null): string | null {
  if (body === null) return null;
  if (EMAIL.test(body)) return "contains an email address";
  if (LINK.test(body)) return "contains a link";
  return null;
}

export interface ReviewInput {
  template?: string;
  handle?: string;
  slug?: string;
  stars: number;
  body?: string;
}

/** `template: "<handle>/<slug>"`, or `handle` with `slug`: exactly one of the two forms. */
function templateOf(input: ReviewInput): { handle: string; slug: string } {
  if (input.template !== undefined) {
    if (input.handle !== undefined || input.slug !== undefined) throw new RelayError("invalid_request", "Send template, or handle with slug, not both.", { field: "template" });
    const parts = input.template.split("/");
    if (parts.length !== 2 || !parts[0] || !parts[1]) throw new RelayError("invalid_request", "template must read <handle>/<slug>.", { field: "template" });
    return { handle: parts[0], slug: parts[1] };
  }
  if (input.handle === undefined || input.slug === undefined) throw new RelayError("invalid_request", "Name the template: template \"<handle>/<slug>\", or handle with slug.", { field: "template" });
  return { handle: input.handle, slug: input.slug };
}

export async function createReview(env: Env, human: HumanRow, input: ReviewInput) {
  const { handle, slug } = templateOf(input);
  if (!human.emailVerifiedAt) throw new RelayError("email_not_verified", "Your human's email address is not verified yet; reviews need it.");
  const publisher = await publisherByHandle(env, handle);
  const installs = publisher === null ? [] : await db(env).select({ install: templateInstalls, reviewId: templateReviews.id }).from(templateInstalls)
    .leftJoin(templateReviews, eq(templateReviews.installId, templateInstalls.id))
    .where(and(eq(templateInstalls.installerHumanId, human.id), eq(templateInstalls.publisherHumanId, publisher.humanId), eq(templateInstalls.templateSlug, slug)))
    .orderBy(desc(templateInstalls.createdAt));
  if (installs.length === 0) {
    throw new RelayError("forbidden", `Only people who installed ${handle}/${slug} may review it.`, { template: `${handle}/${slug}` });
  }
  const open = installs.find((i) => i.reviewId === null);
  if (!open) throw new RelayError("conflict", `Each install of ${handle}/${slug} takes one review, and yours have one.`, { template: `${handle}/${slug}`, review_id: installs[0].reviewId });
  const body = input.body?.trim() ? input.body.trim() : null;
  const held = holdReason(body);
  const row: ReviewRow = {
    id: newId("rev_"), installId: open.install.id, snapshotId: open.install.snapshotId, templatePublisherHumanId: open.install.publisherHumanId,
    templateSlug: open.install.templateSlug, reviewerHumanId: human.id, stars: input.stars, body, status: held ? "held" : "visible",
    heldReason: held, publisherResponse: null, publisherRespondedAt: null, createdAt: nowIso(),
  };
  try {
    await db(env).insert(templateReviews).values(row);
  } catch (err) {
    // Two reviews racing for one install: the unique index lets one in.
    if (String(err).includes("UNIQUE")) throw new RelayError("conflict", "This install was just reviewed.", { install_id: row.installId });
    throw err;
  }
  return reviewView(row);
}

/** A review anyone may address (removed ones are gone for everyone but operators). */
async function liveReview(env: Env, id: string, includeRemoved = false): Promise<ReviewRow> {
  const [row] = await db(env).select().from(templateReviews).where(eq(templateReviews.id, id)).limit(1);
  if (!row || (row.status === "removed" && !includeRemoved)) throw new RelayError("review_not_found", `No review "${id.slice(0, 64)}".`, { review_id: id.slice(0, 64) });
  return row;
}

async function update(env: Env, id: string, changes: Partial<ReviewRow>) {
  const [row] = await db(env).update(templateReviews).set(changes).where(eq(templateReviews.id, id)).returning();
  return reviewView(row);
}

export async function respondToReview(env: Env, humanId: string, id: string, response: string | null) {
  const review = await liveReview(env, id);
  if (review.templatePublisherHumanId !== humanId) throw new RelayError("forbidden", "Only the template's publisher may answer its reviews.", { review_id: review.id });
  const text = response === null || response.trim() === "" ? null : response.trim();
  return update(env, review.id, { publisherResponse: text, publisherRespondedAt: text === null ? null : nowIso() });
}

/** One report per account and review: a repeat answers the first report. */
export async function reportReview(env: Env, humanId: string, id: string, reason: string) {
  const review = await liveReview(env, id);
  await db(env).insert(reviewReports).values({ id: newId("rpt_"), reviewId: review.id, reporterHumanId: humanId, reason: reason.trim(), createdAt: nowIso() })
    .onConflictDoNothing();
  const [report] = await db(env).select().from(reviewReports).where(and(eq(reviewReports.reviewId, review.id), eq(reviewReports.reporterHumanId, humanId))).limit(1);
  return { report_id: report.id, review_id: review.id };
}

/** Operator: take a review down (idempotent). */
export async function removeReview(env: Env, id: string) {
  const review = await liveReview(env, id, true);
  return review.status === "removed" ? reviewView(review) : update(env, review.id, { status: "removed" });
}

/** Operator: show a held review (a visible one stays as it is; a removed one cannot come back this way). */
export async function unholdReview(env: Env, id: string) {
  const review = await liveReview(env, id, true);
  if (review.status === "removed") throw new RelayError("conflict", "This review was removed; it cannot be released.", { review_id: review.id, status: review.status });
  return review.status === "visible" ? reviewView(review) : update(env, review.id, { status: "visible" });
}

/** The publisher's rating: how many visible reviews their templates have and the sum of their stars. */
export async function ratingTotals(env: Env, publisherHumanId: string): Promise<{ rating_count: number; rating_sum: number }> {
  const [row] = await db(env).select({ total: count(), stars: sum(templateReviews.stars) }).from(templateReviews)
    .where(and(eq(templateReviews.templatePublisherHumanId, publisherHumanId), eq(templateReviews.status, "visible")));
  return { rating_count: row?.total ?? 0, rating_sum: Number(row?.stars ?? 0) };
}
