/**
 * Reading template snapshots: the one place that turns a snapshot id or a
 * `<handle>/<slug>` reference into a snapshot row, and a row's JSON columns into values.
 * Publishing, the operator's review, installs and upgrades all read through here.
 */
import { and, desc, eq, isNull } from "drizzle-orm";
import { db } from "../db/client";
import { publishers, templateSnapshots } from "../db/community-schema";
import type { AssetEntry } from "../db/apps";
import { getBlob } from "../blobs/store";

type Env = { DB: D1Database };
export type SnapshotRow = typeof templateSnapshots.$inferSelect;
export type PublisherRow = typeof publishers.$inferSelect;

/** Seed rows as stored: per collection, the rows' keys and data. */
export type SeedRows = Record<string, { key: string; data: unknown }[]>;

/** A setup step as published (WIRE §2.10 SetupStep, camelCase). */
export interface SetupStep {
  kind: "config" | "seed-data" | "connect" | "note" | "upload";
  label: string;
  description?: string;
  required?: boolean;
  secret?: boolean;
  default?: string;
  choices?: string[];
  valueHint?: string;
  key?: string;
  ingestRule?: string;
}

export interface ExternalDestination {
  kind: "webhook" | "embed" | "fetch";
  host: string;
  fromSetting?: string;
  viaConnection?: string;
}

/** Snapshot ids: `tpl_` then the usual time-ordered id. */
export const SNAPSHOT_ID_PREFIX = "tpl_";

export function looksLikeSnapshotId(ref: string): boolean {
  return ref.startsWith(SNAPSHOT_ID_PREFIX);
}

/** Any snapshot by id, whatever its review status. */
export async function snapshotById(env: Env, snapshotId: string): Promise<SnapshotRow | null> {
  const rows = await db(env).select().from(templateSnapshots).where(eq(templateSnapshots.id, snapshotId)).limit(1);
  return rows[0] ?? null;
}

/** The publisher behind a handle (claimed handles only). */
export async function publisherByHandle(env: Env, handle: string): Promise<PublisherRow | null> {
  const rows = await db(env).select().from(publishers).where(eq(publishers.handle, handle.toLowerCase())).limit(1);
  return rows[0] ?? null;
}

export async function publisherByHuman(env: Env, humanId: string): Promise<PublisherRow | null> {
  const rows = await db(env).select().from(publishers).where(eq(publishers.humanId, humanId)).limit(1);
  return rows[0] ?? null;
}

/**
 * The newest approved, still-listed snapshot of `<handle>/<slug>`: what the gallery shows
 * and what an install by name gets. Null when the handle is unclaimed or nothing is listed.
 */
export async function latestApprovedSnapshot(env: Env, handle: string, slug: string): Promise<SnapshotRow | null> {
  const publisher = await publisherByHandle(env, handle);
  if (!publisher) return null;
  const rows = await db(env).select().from(templateSnapshots)
    .where(and(
      eq(templateSnapshots.publisherHumanId, publisher.humanId),
      eq(templateSnapshots.slug, slug),
      eq(templateSnapshots.reviewStatus, "approved"),
      isNull(templateSnapshots.unpublishedAt),
    ))
    .orderBy(desc(templateSnapshots.publishedAt)).limit(1);
  return rows[0] ?? null;
}

/** Installable: approved and not taken down by its publisher. */
export function isListed(snapshot: SnapshotRow): boolean {
  return snapshot.reviewStatus === "approved" && snapshot.unpublishedAt === null;
}

/** A snapshot row's JSON columns, parsed. */
export function snapshotContent(snapshot: SnapshotRow): {
  manifest: Record<string, unknown>;
  assets: AssetEntry[];
  seedRows: SeedRows;
  setupSteps: SetupStep[];
  tags: string[];
  externalDestinations: ExternalDestination[];
} {
  return {
    manifest: JSON.parse(snapshot.manifestJson) as Record<string, unknown>,
    assets: JSON.parse(snapshot.assetsJson) as AssetEntry[],
    seedRows: JSON.parse(snapshot.seedRowsJson) as SeedRows,
    setupSteps: JSON.parse(snapshot.setupStepsJson) as SetupStep[],
    tags: JSON.parse(snapshot.tagsJson) as string[],
    externalDestinations: JSON.parse(snapshot.externalDestinationsJson) as ExternalDestination[],
  };
}

/** The snapshot's HTML document, read from the content-addressed store. */
export async function snapshotDocument(env: { BLOBS: R2Bucket }, snapshot: SnapshotRow): Promise<string> {
  const blob = await getBlob(env.BLOBS, "doc", snapshot.documentSha256);
  return blob ? await blob.text() : "";
}
