/**
 * The operator's review of submissions (spec A states: pending → approved | rejected;
 * listed → unpublished by its publisher). Approving lists a snapshot in the gallery and
 * marks the earlier approved versions of the same `<handle>/<slug>` superseded; rejecting
 * records the operator's note and puts it in the publisher's inbox on the source app
 * (an in-app notification: the app's feed of notices to its owner); unpublishing is the
 * publisher's own act, idempotent, and leaves existing installs alone.
 */
import { and, asc, desc, eq, exists, gt, isNull, lt, ne, or } from "drizzle-orm";
import { db } from "../db/client";
import { publishers, templateSnapshots } from "../db/community-schema";
import { apps } from "../db/apps-schema";
import { notifications } from "../db/notify-schema";
import { newId, nowIso } from "../auth/tokens";
import { RelayError } from "../errors";
import { decodeOpaqueCursor, encodeOpaqueCursor } from "../http/opaque-cursor";
import { snapshotById, type SnapshotRow } from "./snapshots";
import { publishersOf, summaryOf, SUMMARY_COLUMNS, type SubmissionSummary } from "./submission-views";

type Env = { DB: D1Database };

function missing(snapshotId: string): RelayError {
  return new RelayError("submission_not_found", `No submission "${snapshotId.slice(0, 64)}".`, { snapshot_id: snapshotId.slice(0, 64) });
}

export async function submissionById(env: Env, snapshotId: string): Promise<SnapshotRow> {
  const snapshot = await snapshotById(env, snapshotId);
  if (!snapshot) throw missing(snapshotId);
  return snapshot;
}

/** Pending submissions still standing, expedited first, then oldest first; a page at a time. */
export async function pendingQueue(env: Env, limit: number, cursor?: string): Promise<{ items: SubmissionSummary[]; next_cursor: string | null }> {
  const after = cursor === undefined ? null : decodeOpaqueCursor(cursor, ["number", "string", "string"]) as [number, string, string];
  const afterCursor = after === null ? undefined : or(
    lt(templateSnapshots.expedited, after[0] === 1),
    and(eq(templateSnapshots.expedited, after[0] === 1), or(
      gt(templateSnapshots.publishedAt, after[1]),
      and(eq(templateSnapshots.publishedAt, after[1]), gt(templateSnapshots.id, after[2])),
    )),
  );
  const columns = Object.fromEntries(SUMMARY_COLUMNS.map((name) => [name, templateSnapshots[name]])) as { [K in (typeof SUMMARY_COLUMNS)[number]]: (typeof templateSnapshots)[K] };
  const rows = await db(env).select(columns).from(templateSnapshots)
    .where(and(eq(templateSnapshots.reviewStatus, "pending"), isNull(templateSnapshots.unpublishedAt), afterCursor))
    .orderBy(desc(templateSnapshots.expedited), asc(templateSnapshots.publishedAt), asc(templateSnapshots.id))
    .limit(limit + 1);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const owners = await publishersOf(env, page);
  return {
    items: page.map((snapshot) => summaryOf(snapshot, owners.get(snapshot.publisherHumanId))),
    next_cursor: rows.length > limit && last ? encodeOpaqueCursor([last.expedited ? 1 : 0, last.publishedAt, last.id]) : null,
  };
}

/**
 * Lists a snapshot: approved now, earlier approved versions of its slug superseded, the
 * publisher's first publication recorded. `reviewerHumanId` null: approved on arrival.
 */
export async function markApproved(env: Env, snapshot: SnapshotRow, reviewerHumanId: string | null): Promise<void> {
  const now = nowIso();
  const d = db(env);
  const steps = [
    d.update(templateSnapshots).set({ reviewStatus: "approved", reviewedAt: now, reviewedByHumanId: reviewerHumanId })
      .where(eq(templateSnapshots.id, snapshot.id)),
    d.update(publishers).set({ firstPublishedAt: now })
      .where(and(eq(publishers.humanId, snapshot.publisherHumanId), isNull(publishers.firstPublishedAt))),
  ] as const;
  if (snapshot.slug === null) {
    await d.batch(steps);
    return;
  }
  const sameSlug = and(
    eq(templateSnapshots.publisherHumanId, snapshot.publisherHumanId),
    eq(templateSnapshots.slug, snapshot.slug),
    eq(templateSnapshots.reviewStatus, "approved"),
    ne(templateSnapshots.id, snapshot.id),
  );
  await d.batch([
    ...steps,
    d.update(templateSnapshots).set({ supersededAt: now })
      .where(and(sameSlug, isNull(templateSnapshots.supersededAt), lt(templateSnapshots.publishedAt, snapshot.publishedAt))),
    // Approving an older version after a newer one was listed leaves the newer one listed.
    d.update(templateSnapshots).set({ supersededAt: now }).where(and(
      eq(templateSnapshots.id, snapshot.id),
      exists(d.select({ id: templateSnapshots.id }).from(templateSnapshots).where(and(sameSlug, gt(templateSnapshots.publishedAt, snapshot.publishedAt)))),
    )),
  ]);
}

/** Approves a pending (or earlier rejected) submission; approving an approved one changes nothing. */
export async function approveSubmission(env: Env, snapshotId: string, operatorHumanId: string): Promise<SnapshotRow> {
  const snapshot = await submissionById(env, snapshotId);
  if (snapshot.unpublishedAt !== null) {
    throw new RelayError("conflict", "The publisher withdrew this submission; it cannot be approved.", { snapshot_id: snapshot.id, unpublished_at: snapshot.unpublishedAt });
  }
  if (snapshot.reviewStatus !== "approved") await markApproved(env, snapshot, operatorHumanId);
  return submissionById(env, snapshotId);
}

/** Rejects with the operator's note (also taking an approved one out of the gallery) and tells the publisher. */
export async function rejectSubmission(env: Env, snapshotId: string, operatorHumanId: string, note: string): Promise<SnapshotRow> {
  const snapshot = await submissionById(env, snapshotId);
  const now = nowIso();
  await db(env).update(templateSnapshots)
    .set({ reviewStatus: "rejected", reviewedAt: now, reviewedByHumanId: operatorHumanId, reviewNote: note })
    .where(eq(templateSnapshots.id, snapshot.id));
  await noticeToPublisher(env, snapshot, `Template "${snapshot.title}" ${snapshot.version} was not approved`, note, now);
  return submissionById(env, snapshotId);
}

/**
 * The reviewer's note, as an in-app notice to the publisher on the app the template was
 * published from (skipped when that app is gone). One per review decision.
 */
async function noticeToPublisher(env: Env, snapshot: SnapshotRow, subject: string, body: string, at: string): Promise<void> {
  const [source] = await db(env).select({ id: apps.id }).from(apps).where(eq(apps.id, snapshot.sourceAppId)).limit(1);
  if (!source) return;
  await db(env).insert(notifications).values({
    id: newId("ntf_"), appId: snapshot.sourceAppId, source: `template-review:${snapshot.id}:${at}`, ruleId: "template-review",
    collection: "", rowKey: snapshot.id, op: "review", channel: "inapp", recipient: `human:${snapshot.publisherHumanId}`,
    humanId: snapshot.publisherHumanId, subject, body, link: null, status: "sent", createdAt: at, sentAt: at,
  }).onConflictDoNothing();
}

/** The publisher takes their own submission out of the queue or the gallery; again changes nothing. */
export async function unpublishSubmission(env: Env, snapshotId: string, publisherHumanId: string): Promise<SnapshotRow> {
  const snapshot = await snapshotById(env, snapshotId);
  if (!snapshot || snapshot.publisherHumanId !== publisherHumanId) throw missing(snapshotId);
  if (snapshot.unpublishedAt === null) {
    await db(env).update(templateSnapshots).set({ unpublishedAt: nowIso() })
      .where(and(eq(templateSnapshots.id, snapshot.id), isNull(templateSnapshots.unpublishedAt)));
  }
  return submissionById(env, snapshotId);
}
