/**
 * `POST /v1/community/publish` (WIRE §2.10): snapshots an owned app's live version as a
 * template submission. What goes in: the live document and assets (by their sha256 in
 * the content-addressed store), the manifest as deployed, the setup steps, and seed rows
 * only when the publisher attests they are example data, and then only from collections
 * marked `seedOnInstall` (never the settings collection, which holds install answers and
 * secrets). Members, grants, credentials, connections and their secrets are never read.
 * Refused: a manifest a template may not carry (destinations.ts), setup steps that do not
 * fit the manifest, a version not above the slug's latest, a snapshot over
 * MAX_ARTIFACT_BYTES. An `established` publisher's submission is approved on arrival
 * unless it reaches a destination the slug's approved version did not (see
 * docs/decisions/2026-11-26-community-review.md).
 */
import { and, eq } from "drizzle-orm";
import { config } from "../config";
import { RelayError } from "../errors";
import { db } from "../db/client";
import { templateSnapshots } from "../db/community-schema";
import { getVersion, type AppRow } from "../db/apps";
import { listConnections } from "../db/connections";
import type { HumanRow } from "../db/humans";
import type { CompiledManifest } from "../manifest";
import { requireLiveManifest } from "../apps/live-manifest";
import { ownerRows } from "../apps/owner-rows";
import { slugStem } from "../apps/slug";
import { newId, nowIso } from "../auth/tokens";
import { externalDestinations, newDestinations, publishRefusals, type Refusal } from "./destinations";
import { ensurePublisher } from "./publishers";
import { markApproved } from "./review";
import { compareSemver } from "./semver";
import { utf8Bytes } from "../bytes";
import { snapshotById, snapshotContent, SNAPSHOT_ID_PREFIX, type SeedRows, type SetupStep, type SnapshotRow } from "./snapshots";

export interface PublishInput {
  title?: string;
  description?: string;
  long_description?: string;
  category?: string;
  tags?: string[];
  slug?: string;
  version?: string;
  changelog_note?: string;
  setup_steps?: SetupStep[];
  derived_from_snapshot_id?: string;
  attest_example_only?: boolean;
}

export interface PublishAnswer {
  snapshot_id: string;
  review_status: SnapshotRow["reviewStatus"];
  name: string;
  seeded_row_count: number;
  slug: string | null;
  version: string;
  setup_step_count: number;
  attest_example_only: boolean | null;
  expedited: boolean;
  auto_approved: boolean;
}

export const DEFAULT_TEMPLATE_VERSION = "1.0.0";
export const TEMPLATE_SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{1,46}[a-z0-9])$/;
/** JSON kept in one D1 row (manifest, seed rows, steps) stays under D1's 2 MB row cap. */
const MAX_SNAPSHOT_ROW_JSON_BYTES = 1_800_000;

function refuse(code: "invalid_request" | "template_not_publishable", refusals: Refusal[]): never {
  const first = refusals[0];
  const more = refusals.length - 1;
  throw new RelayError(code, more > 0 ? `${first.message} (and ${more} more in details.issues)` : first.message, { field: first.field, issues: refusals });
}

/** Setup steps that the manifest cannot honour: an unknown ingest rule, config with nowhere to keep it. */
export function setupStepRefusals(steps: SetupStep[], manifest: CompiledManifest): Refusal[] {
  const refusals: Refusal[] = [];
  const settings = manifest.settingsCollection === null ? null : manifest.collections[manifest.settingsCollection];
  steps.forEach((step, index) => {
    const at = `setup_steps.${index}`;
    if (step.kind === "connect" && step.ingestRule !== undefined && !manifest.ingest.some((rule) => rule.name === step.ingestRule)) {
      refusals.push({ field: `${at}.ingestRule`, message: `${at}.ingestRule names no ingest rule the manifest declares` });
    }
    if ((step.kind === "config" || step.kind === "upload") && settings === null) {
      refusals.push({ field: `${at}.kind`, message: `${at} asks for ${step.kind} answers, but the manifest declares no settingsCollection to keep them` });
    }
    if (step.secret && settings && !(settings.permissions.read.length === 1 && settings.permissions.read[0].subject === "owner")) {
      refusals.push({ field: `${at}.secret`, message: `${at} is secret, so the settings collection's read list must be exactly ["owner"]` });
    }
  });
  return refusals;
}

/** The rows of `seedOnInstall` collections (never the settings collection), as the owner sees them. */
async function seedRowsOf(env: Env, app: AppRow, manifest: CompiledManifest): Promise<{ rows: SeedRows; count: number }> {
  const rows: SeedRows = {};
  let count = 0;
  for (const collection of Object.values(manifest.collections)) {
    if (!collection.seedOnInstall || collection.name === manifest.settingsCollection) continue;
    const taken: SeedRows[string] = [];
    for await (const row of ownerRows(env, app, collection.name)) taken.push({ key: row.key, data: row.data });
    if (taken.length > 0) {
      rows[collection.name] = taken;
      count += taken.length;
    }
  }
  return { rows, count };
}

/** Every earlier snapshot of the publisher's slug, newest first. */
async function slugHistory(env: Env, publisherHumanId: string, slug: string): Promise<SnapshotRow[]> {
  const rows = await db(env).select().from(templateSnapshots)
    .where(and(eq(templateSnapshots.publisherHumanId, publisherHumanId), eq(templateSnapshots.slug, slug)));
  return rows.sort((a, b) => compareSemver(b.version, a.version));
}

/** Without a slug, the title's (WIRE-MCP §2.23: derived from the title); null when the title yields none. */
function slugFromTitle(title: string): string | null {
  const stem = slugStem(title, 48);
  return TEMPLATE_SLUG_PATTERN.test(stem) ? stem : null;
}

export async function publishApp(env: Env, human: HumanRow, agentId: string, app: AppRow, input: PublishInput): Promise<PublishAnswer> {
  const cfg = config(env);
  if (!cfg.flags.COMMUNITY_PUBLISH_ENABLED) throw new RelayError("community_publish_disabled", "Publishing templates is turned off on this relay.");
  const manifest = await requireLiveManifest(env, app);
  const version = await getVersion(env, app.id, app.currentVersion!);
  if (!version) throw new RelayError("conflict", "This app has no live version.");
  const notPublishable = publishRefusals(manifest);
  if (notPublishable.length > 0) refuse("template_not_publishable", notPublishable);
  const steps = input.setup_steps ?? [];
  const badSteps = setupStepRefusals(steps, manifest);
  if (badSteps.length > 0) refuse("invalid_request", badSteps);
  if (input.derived_from_snapshot_id !== undefined && !(await snapshotById(env, input.derived_from_snapshot_id))) {
    throw new RelayError("template_not_found", "derived_from_snapshot_id names no snapshot.", { field: "derived_from_snapshot_id" });
  }

  const publisher = await ensurePublisher(env, human.id);
  const templateVersion = input.version ?? DEFAULT_TEMPLATE_VERSION;
  const title = input.title ?? manifest.app.name.slice(0, 80);
  const slug = input.slug ?? slugFromTitle(title);
  const history = slug === null ? [] : await slugHistory(env, human.id, slug);
  if (history[0] && compareSemver(templateVersion, history[0].version) <= 0) {
    throw new RelayError("template_version_not_newer", `${slug} already has version ${history[0].version}; publish a greater one.`,
      { field: "version", version: templateVersion, latest: history[0].version });
  }

  const seeds = input.attest_example_only === true ? await seedRowsOf(env, app, manifest) : { rows: {}, count: 0 };
  const seedJson = JSON.stringify(seeds.rows);
  const stepsJson = JSON.stringify(steps);
  const rowJsonBytes = utf8Bytes(seedJson) + utf8Bytes(version.manifestJson) + utf8Bytes(stepsJson);
  const artifactBytes = version.documentBytes + rowJsonBytes;
  const limit = Math.min(cfg.limits.MAX_ARTIFACT_BYTES!, version.documentBytes + MAX_SNAPSHOT_ROW_JSON_BYTES);
  if (artifactBytes > limit) {
    throw new RelayError("payload_too_large", `The template would be ${artifactBytes} bytes (document, manifest, seed rows and steps); the cap is ${limit}.`,
      { field: "attest_example_only", limit, bytes: artifactBytes });
  }

  const connections = await listConnections(env, app.id);
  const destinations = externalDestinations(manifest, connections);
  const approvedBefore = history.find((snapshot) => snapshot.reviewStatus === "approved");
  const expedited = approvedBefore !== undefined;
  const autoApproved = publisher.trustLevel === "established"
    && newDestinations(approvedBefore ? snapshotContent(approvedBefore).externalDestinations : [], destinations).length === 0;

  const snapshot: SnapshotRow = {
    id: newId(SNAPSHOT_ID_PREFIX), publisherHumanId: human.id, publishedByAgentId: agentId,
    sourceAppId: app.id, sourceAppVersion: version.version, versionId: `${app.id}@${version.version}`,
    name: manifest.app.name, slug, version: templateVersion, title,
    description: input.description ?? null, longDescription: input.long_description ?? null, category: input.category ?? null,
    tagsJson: JSON.stringify(input.tags ?? []),
    documentSha256: version.documentSha256, documentBytes: version.documentBytes, manifestJson: version.manifestJson, assetsJson: version.assetsJson,
    seedRowsJson: seedJson, seededRowCount: seeds.count, attestExampleOnly: input.attest_example_only ?? null,
    setupStepsJson: stepsJson, settingsCollection: manifest.settingsCollection, externalDestinationsJson: JSON.stringify(destinations),
    changelog: input.changelog_note ?? null, license: null, licenseTerms: null, derivedFromSnapshotId: input.derived_from_snapshot_id ?? null,
    reviewStatus: "pending", expedited, autoApproved, reviewedAt: null, reviewedByHumanId: null, reviewNote: null,
    supersededAt: null, publishedAt: nowIso(), unpublishedAt: null,
  };
  await db(env).insert(templateSnapshots).values(snapshot);
  if (autoApproved) await markApproved(env, snapshot, null);

  return {
    snapshot_id: snapshot.id, review_status: autoApproved ? "approved" : "pending", name: snapshot.title,
    seeded_row_count: seeds.count, slug, version: templateVersion, setup_step_count: steps.length,
    attest_example_only: snapshot.attestExampleOnly, expedited, auto_approved: autoApproved,
  };
}
