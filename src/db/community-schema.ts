/**
 * The D1 side of community templates (spec A "Community templates, publisher, reviews";
 * WIRE §2.10): a human's publisher profile and the immutable snapshots they publish. They
 * live in D1, not in an AppStore, because the gallery, the operator's queue and installs
 * read across every publisher. A snapshot's document and asset bytes stay in the
 * content-addressed R2 store (referenced by sha256, never deleted), its rows and steps are
 * JSON here.
 */
import { sqliteTable, text, integer, index, uniqueIndex } from "drizzle-orm/sqlite-core";

/**
 * One row per human who asked for their profile, claimed a handle or published. `handle`
 * is null until claimed and never changes after (a unique index holds it). `trust_level`
 * is set by an operator; `established` publishers' submissions are approved on arrival.
 */
export const publishers = sqliteTable("publishers", {
  humanId: text("human_id").primaryKey(),
  handle: text("handle"),
  displayName: text("display_name"),
  bio: text("bio"),
  url: text("url"),
  trustLevel: text("trust_level", { enum: ["new", "established"] }).notNull().default("new"),
  trustSetAt: text("trust_set_at"),
  trustSetByHumanId: text("trust_set_by_human_id"),
  claimedAt: text("claimed_at"),
  createdAt: text("created_at").notNull(),
  firstPublishedAt: text("first_published_at"),
}, (t) => [uniqueIndex("publishers_handle").on(t.handle)]);

/**
 * One published snapshot of an app's live version. Immutable content once written; only
 * the review fields, `superseded_at` (a later version of the same slug was approved) and
 * `unpublished_at` (the publisher took it down) change.
 *
 * JSON columns: `tags_json` string[]; `manifest_json` the compiled manifest as deployed;
 * `assets_json` the version's asset index [{ path, sha256, size, mime }]; `seed_rows_json`
 * { [collection]: [{ key, data }] } (only when the publisher attested the rows are example
 * data, else {}); `setup_steps_json` SetupStep[] as published (camelCase, WIRE §2.10);
 * `external_destinations_json` [{ kind, host, fromSetting?, viaConnection? }] for the
 * reviewer.
 */
export const templateSnapshots = sqliteTable("template_snapshots", {
  id: text("id").primaryKey(),
  publisherHumanId: text("publisher_human_id").notNull(),
  publishedByAgentId: text("published_by_agent_id").notNull(),
  sourceAppId: text("source_app_id").notNull(),
  sourceAppVersion: integer("source_app_version").notNull(),
  versionId: text("version_id").notNull(),
  name: text("name").notNull(),
  slug: text("slug"),
  version: text("version").notNull(),
  title: text("title").notNull(),
  description: text("description"),
  longDescription: text("long_description"),
  category: text("category"),
  tagsJson: text("tags_json").notNull(),
  documentSha256: text("document_sha256").notNull(),
  documentBytes: integer("document_bytes").notNull(),
  manifestJson: text("manifest_json").notNull(),
  assetsJson: text("assets_json").notNull(),
  seedRowsJson: text("seed_rows_json").notNull(),
  seededRowCount: integer("seeded_row_count").notNull(),
  attestExampleOnly: integer("attest_example_only", { mode: "boolean" }),
  setupStepsJson: text("setup_steps_json").notNull(),
  settingsCollection: text("settings_collection"),
  externalDestinationsJson: text("external_destinations_json").notNull(),
  changelog: text("changelog"),
  license: text("license"),
  licenseTerms: text("license_terms"),
  derivedFromSnapshotId: text("derived_from_snapshot_id"),
  reviewStatus: text("review_status", { enum: ["pending", "approved", "rejected"] }).notNull(),
  expedited: integer("expedited", { mode: "boolean" }).notNull(),
  autoApproved: integer("auto_approved", { mode: "boolean" }).notNull(),
  reviewedAt: text("reviewed_at"),
  reviewedByHumanId: text("reviewed_by_human_id"),
  reviewNote: text("review_note"),
  supersededAt: text("superseded_at"),
  publishedAt: text("published_at").notNull(),
  unpublishedAt: text("unpublished_at"),
}, (t) => [
  index("template_snapshots_publisher_slug").on(t.publisherHumanId, t.slug, t.publishedAt),
  index("template_snapshots_queue").on(t.reviewStatus, t.expedited, t.publishedAt),
  index("template_snapshots_source_app").on(t.sourceAppId),
]);
