/**
 * How a submission looks on the wire (WIRE §2.10): SubmissionSummary in the operator's
 * queue, SubmissionDetail (everything a reviewer needs: the HTML, the manifest, the seed
 * rows and their sizes, the setup steps and where the app would send data) from show,
 * approve, reject and unpublish. Reads only; the snapshot rows come from snapshots.ts.
 */
import { inList } from "../db/in-list";
import { db } from "../db/client";
import { publishers } from "../db/community-schema";
import { snapshotContent, snapshotDocument, type ExternalDestination, type PublisherRow, type SeedRows, type SetupStep, type SnapshotRow } from "./snapshots";

export interface SubmissionSummary {
  snapshot_id: string;
  name: string;
  description: string | null;
  long_description: string | null;
  category: string | null;
  tags: string[];
  review_status: SnapshotRow["reviewStatus"];
  publisher_human_id: string;
  publisher_name: string | null;
  source_app_id: string;
  seeded_row_count: number;
  published_at: string;
  slug: string | null;
  version: string;
  attest_example_only: boolean | null;
  expedited: boolean;
  publisher_trust_level: PublisherRow["trustLevel"];
}

export interface SeedSummary {
  collections: { collection: string; row_count: number; bytes: number }[];
  total_rows: number;
  total_bytes: number;
}

export interface SubmissionDetail extends SubmissionSummary {
  html: string;
  manifest: Record<string, unknown>;
  seed_rows: SeedRows;
  seed_summary: SeedSummary;
  version_id: string;
  reviewed_at: string | null;
  review_note: string | null;
  superseded_at: string | null;
  unpublished_at: string | null;
  changelog: string | null;
  license: string | null;
  license_terms: string | null;
  derived_from_snapshot_id: string | null;
  setup_steps: SetupStep[];
  external_destinations: ExternalDestination[];
}

/** The name a publisher goes by in the queue: display name, else handle, else null. */
function publisherName(publisher: PublisherRow | undefined): string | null {
  return publisher?.displayName ?? publisher?.handle ?? null;
}

export async function publishersOf(env: { DB: D1Database }, snapshots: Pick<SnapshotRow, "publisherHumanId">[]): Promise<Map<string, PublisherRow>> {
  const ids = [...new Set(snapshots.map((snapshot) => snapshot.publisherHumanId))];
  if (ids.length === 0) return new Map();
  const rows = await db(env).select().from(publishers).where(inList(publishers.humanId, ids));
  return new Map(rows.map((row) => [row.humanId, row]));
}

/** The snapshot columns a summary reads: none of the large JSON ones (manifest, seed rows, steps, assets). */
export const SUMMARY_COLUMNS = [
  "id", "title", "description", "longDescription", "category", "tagsJson", "reviewStatus", "publisherHumanId", "sourceAppId",
  "seededRowCount", "publishedAt", "slug", "version", "attestExampleOnly", "expedited",
] as const satisfies readonly (keyof SnapshotRow)[];
export type SummaryColumns = Pick<SnapshotRow, (typeof SUMMARY_COLUMNS)[number]>;

export function summaryOf(snapshot: SummaryColumns, publisher: PublisherRow | undefined): SubmissionSummary {
  return {
    snapshot_id: snapshot.id,
    name: snapshot.title,
    description: snapshot.description,
    long_description: snapshot.longDescription,
    category: snapshot.category,
    tags: JSON.parse(snapshot.tagsJson) as string[],
    review_status: snapshot.reviewStatus,
    publisher_human_id: snapshot.publisherHumanId,
    publisher_name: publisherName(publisher),
    source_app_id: snapshot.sourceAppId,
    seeded_row_count: snapshot.seededRowCount,
    published_at: snapshot.publishedAt,
    slug: snapshot.slug,
    version: snapshot.version,
    attest_example_only: snapshot.attestExampleOnly,
    expedited: snapshot.expedited,
    publisher_trust_level: publisher?.trustLevel ?? "new",
  };
}

export function seedSummaryOf(seedRows: SeedRows): SeedSummary {
  const encoder = new TextEncoder();
  const collections = Object.entries(seedRows).map(([collection, rows]) => ({
    collection, row_count: rows.length, bytes: encoder.encode(JSON.stringify(rows)).byteLength,
  }));
  return {
    collections,
    total_rows: collections.reduce((sum, entry) => sum + entry.row_count, 0),
    total_bytes: collections.reduce((sum, entry) => sum + entry.bytes, 0),
  };
}

export async function detailOf(env: { DB: D1Database; BLOBS: R2Bucket }, snapshot: SnapshotRow): Promise<SubmissionDetail> {
  const content = snapshotContent(snapshot);
  const publisher = (await publishersOf(env, [snapshot])).get(snapshot.publisherHumanId);
  return {
    ...summaryOf(snapshot, publisher),
    html: await snapshotDocument(env, snapshot),
    manifest: content.manifest,
    seed_rows: content.seedRows,
    seed_summary: seedSummaryOf(content.seedRows),
    version_id: snapshot.versionId,
    reviewed_at: snapshot.reviewedAt,
    review_note: snapshot.reviewNote,
    superseded_at: snapshot.supersededAt,
    unpublished_at: snapshot.unpublishedAt,
    changelog: snapshot.changelog,
    license: snapshot.license,
    license_terms: snapshot.licenseTerms,
    derived_from_snapshot_id: snapshot.derivedFromSnapshotId,
    setup_steps: content.setupSteps,
    external_destinations: content.externalDestinations,
  };
}
