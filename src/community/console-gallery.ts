/**
 * Read-only queries behind the console's template gallery: the approved, still-listed
 * templates (the newest version of each `<handle>/<slug>`) with their publisher handle,
 * visible-review rating and install count, and one template's visible reviews. The API
 * has no gallery listing, so the console reads here; installs, publishing and review
 * decisions stay in their own modules.
 */
import { and, desc, eq, isNotNull, isNull, sql } from "drizzle-orm";
import { inList } from "../db/in-list";
import { db } from "../db/client";
import { publishers, templateSnapshots } from "../db/community-schema";
import { templateInstalls, templateReviews } from "../db/community-installs-schema";
import { snapshotContent, type SnapshotRow } from "./snapshots";

type Env = { DB: D1Database };

/** How many listed snapshots the gallery reads at most (newest first). */
export const GALLERY_SCAN_LIMIT = 500;
/** How many reviews a template's page shows. */
export const TEMPLATE_PAGE_REVIEWS = 50;

export interface GalleryEntry {
  snapshot: SnapshotRow;
  handle: string;
  slug: string;
  tags: string[];
  ratingCount: number;
  /** Mean stars of the visible reviews, one decimal; null without reviews. */
  rating: number | null;
  installCount: number;
}

/** A template is one publisher's slug; its rating and installs are counted across its versions. */
function templateKey(publisherHumanId: string, slug: string): string {
  return `${publisherHumanId}\u0000${slug}`;
}

async function ratings(env: Env, publisherIds: string[]): Promise<Map<string, { count: number; sum: number }>> {
  if (publisherIds.length === 0) return new Map();
  const rows = await db(env).select({
    publisher: templateReviews.templatePublisherHumanId, slug: templateReviews.templateSlug,
    count: sql<number>`count(*)`, sum: sql<number>`sum(${templateReviews.stars})`,
  }).from(templateReviews)
    .where(and(inList(templateReviews.templatePublisherHumanId, publisherIds), eq(templateReviews.status, "visible")))
    .groupBy(templateReviews.templatePublisherHumanId, templateReviews.templateSlug);
  return new Map(rows.filter((row) => row.slug !== null).map((row) => [templateKey(row.publisher, row.slug!), { count: row.count, sum: row.sum }]));
}

async function installCounts(env: Env, publisherIds: string[]): Promise<Map<string, number>> {
  if (publisherIds.length === 0) return new Map();
  const rows = await db(env).select({ publisher: templateInstalls.publisherHumanId, slug: templateInstalls.templateSlug, count: sql<number>`count(*)` })
    .from(templateInstalls).where(inList(templateInstalls.publisherHumanId, publisherIds))
    .groupBy(templateInstalls.publisherHumanId, templateInstalls.templateSlug);
  return new Map(rows.filter((row) => row.slug !== null).map((row) => [templateKey(row.publisher, row.slug!), row.count]));
}

/** Mean stars, one decimal; null without ratings. */
export function meanStars(rating: { count: number; sum: number } | undefined): number | null {
  return rating && rating.count > 0 ? Math.round((rating.sum / rating.count) * 10) / 10 : null;
}

/** Whether `text` (lower-cased) appears in the entry's title, description, category, tags, handle or slug. */
function matches(entry: GalleryEntry, text: string): boolean {
  const { snapshot } = entry;
  return [snapshot.title, snapshot.description ?? "", snapshot.category ?? "", entry.handle, entry.slug, ...entry.tags]
    .some((field) => field.toLowerCase().includes(text));
}

/**
 * The gallery: per `<handle>/<slug>` its newest approved, listed snapshot, newest first,
 * optionally narrowed by a search text and a category.
 */
export async function galleryEntries(env: Env, filter: { search?: string; category?: string } = {}): Promise<GalleryEntry[]> {
  const rows = await db(env).select({ snapshot: templateSnapshots, handle: publishers.handle }).from(templateSnapshots)
    .innerJoin(publishers, eq(publishers.humanId, templateSnapshots.publisherHumanId))
    .where(and(eq(templateSnapshots.reviewStatus, "approved"), isNull(templateSnapshots.unpublishedAt), isNotNull(templateSnapshots.slug), isNotNull(publishers.handle)))
    .orderBy(desc(templateSnapshots.publishedAt)).limit(GALLERY_SCAN_LIMIT);
  const newest = new Map<string, { snapshot: SnapshotRow; handle: string }>();
  for (const row of rows) {
    const key = templateKey(row.snapshot.publisherHumanId, row.snapshot.slug!);
    if (!newest.has(key)) newest.set(key, { snapshot: row.snapshot, handle: row.handle! });
  }
  const publisherIds = [...new Set([...newest.values()].map((entry) => entry.snapshot.publisherHumanId))];
  const [rated, installed] = await Promise.all([ratings(env, publisherIds), installCounts(env, publisherIds)]);
  const search = filter.search?.trim().toLowerCase() ?? "";
  const category = filter.category?.trim().toLowerCase() ?? "";
  return [...newest.entries()].map(([key, { snapshot, handle }]) => {
    const rating = rated.get(key);
    return {
      snapshot, handle, slug: snapshot.slug!, tags: snapshotContent(snapshot).tags,
      ratingCount: rating?.count ?? 0, rating: meanStars(rating),
      installCount: installed.get(key) ?? 0,
    };
  }).filter((entry) => (!search || matches(entry, search)) && (!category || (entry.snapshot.category ?? "").toLowerCase() === category));
}

export type TemplateReview = typeof templateReviews.$inferSelect;

/** The visible reviews of a publisher's template, newest first. */
export async function visibleReviews(env: Env, publisherHumanId: string, slug: string): Promise<TemplateReview[]> {
  return db(env).select().from(templateReviews)
    .where(and(eq(templateReviews.templatePublisherHumanId, publisherHumanId), eq(templateReviews.templateSlug, slug), eq(templateReviews.status, "visible")))
    .orderBy(desc(templateReviews.createdAt)).limit(TEMPLATE_PAGE_REVIEWS);
}

/** One template's visible-review rating and install count, as the gallery counts them. */
export async function templateStats(env: Env, publisherHumanId: string, slug: string): Promise<{ ratingCount: number; rating: number | null; installCount: number }> {
  const key = templateKey(publisherHumanId, slug);
  const [rated, installed] = await Promise.all([ratings(env, [publisherHumanId]), installCounts(env, [publisherHumanId])]);
  const rating = rated.get(key);
  return { ratingCount: rating?.count ?? 0, rating: meanStars(rating), installCount: installed.get(key) ?? 0 };
}

/** Reviews held for an operator (a link or address in the body), oldest first: the review queue's second list. */
export async function heldReviews(env: Env): Promise<TemplateReview[]> {
  return db(env).select().from(templateReviews).where(eq(templateReviews.status, "held"))
    .orderBy(templateReviews.createdAt).limit(TEMPLATE_PAGE_REVIEWS);
}
