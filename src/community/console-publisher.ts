/**
 * Read-only queries behind the console's publisher page: every snapshot a person
 * published (newest first, whatever its review status) and the reviews of their templates
 * that are not removed. The profile, claims, edits and responses go through
 * publishers.ts and reviews.ts like the API's.
 */
import { and, desc, eq, ne } from "drizzle-orm";
import { db } from "../db/client";
import { templateSnapshots } from "../db/community-schema";
import { templateReviews } from "../db/community-installs-schema";
import type { SnapshotRow } from "./snapshots";
import type { TemplateReview } from "./console-gallery";

type Env = { DB: D1Database };

/** How many snapshots and reviews the publisher page lists. */
export const PUBLISHER_PAGE_ROWS = 100;

export async function snapshotsOfPublisher(env: Env, publisherHumanId: string): Promise<SnapshotRow[]> {
  return db(env).select().from(templateSnapshots).where(eq(templateSnapshots.publisherHumanId, publisherHumanId))
    .orderBy(desc(templateSnapshots.publishedAt)).limit(PUBLISHER_PAGE_ROWS);
}

/** Visible and held reviews of the publisher's templates, newest first (removed ones are gone for everyone). */
export async function reviewsOfPublisher(env: Env, publisherHumanId: string): Promise<TemplateReview[]> {
  return db(env).select().from(templateReviews)
    .where(and(eq(templateReviews.templatePublisherHumanId, publisherHumanId), ne(templateReviews.status, "removed")))
    .orderBy(desc(templateReviews.createdAt)).limit(PUBLISHER_PAGE_ROWS);
}
