/**
 * The D1 schema of what happens to a community template after it is approved: each
 * install (which snapshot made which app for whom, the template version it runs now and
 * what an upgrade replaced, so it can be reverted), the star reviews installers leave
 * (one per install), the reports people file against a review (one per account), and a
 * per-day rollup of the publisher's analytics (tries, installs, views, and tries and
 * installs per country). The templates and publishers themselves live in
 * community-schema.ts.
 */
import { sqliteTable, text, integer, index, uniqueIndex, primaryKey } from "drizzle-orm/sqlite-core";

/** One app created from a template. The app keeps its row when the snapshot is superseded. */
export const templateInstalls = sqliteTable("template_installs", {
  id: text("id").primaryKey(),
  appId: text("app_id").notNull(),
  /** The snapshot the app was first installed from. */
  installedSnapshotId: text("installed_snapshot_id").notNull(),
  /** The snapshot whose version the app runs now (changes with upgrade and revert). */
  snapshotId: text("snapshot_id").notNull(),
  templateVersion: text("template_version").notNull(),
  publisherHumanId: text("publisher_human_id").notNull(),
  templateSlug: text("template_slug"),
  installerHumanId: text("installer_human_id").notNull(),
  installerAgentId: text("installer_agent_id"),
  /** What the last upgrade replaced: the app version to go back to and its template version. */
  previousAppVersion: integer("previous_app_version"),
  previousSnapshotId: text("previous_snapshot_id"),
  previousTemplateVersion: text("previous_template_version"),
  lastUpgradedAt: text("last_upgraded_at"),
  createdAt: text("created_at").notNull(),
}, (t) => [
  uniqueIndex("template_installs_app").on(t.appId),
  index("template_installs_installer").on(t.installerHumanId, t.publisherHumanId, t.templateSlug),
  index("template_installs_snapshot").on(t.installedSnapshotId),
]);

export const REVIEW_STATUSES = ["visible", "held", "removed"] as const;
export type ReviewStatus = (typeof REVIEW_STATUSES)[number];

/** A star review of a template by someone who installed it. */
export const templateReviews = sqliteTable("template_reviews", {
  id: text("id").primaryKey(),
  installId: text("install_id").notNull(),
  snapshotId: text("snapshot_id").notNull(),
  templatePublisherHumanId: text("template_publisher_human_id").notNull(),
  templateSlug: text("template_slug"),
  reviewerHumanId: text("reviewer_human_id").notNull(),
  stars: integer("stars").notNull(),
  body: text("body"),
  status: text("status", { enum: REVIEW_STATUSES }).notNull(),
  heldReason: text("held_reason"),
  publisherResponse: text("publisher_response"),
  publisherRespondedAt: text("publisher_responded_at"),
  createdAt: text("created_at").notNull(),
}, (t) => [
  uniqueIndex("template_reviews_install").on(t.installId),
  index("template_reviews_publisher").on(t.templatePublisherHumanId, t.status),
]);

/** A report asking an operator to look at a review; one per reporting account. */
export const reviewReports = sqliteTable("review_reports", {
  id: text("id").primaryKey(),
  reviewId: text("review_id").notNull(),
  reporterHumanId: text("reporter_human_id").notNull(),
  reason: text("reason").notNull(),
  createdAt: text("created_at").notNull(),
}, (t) => [uniqueIndex("review_reports_once").on(t.reviewId, t.reporterHumanId)]);

/** The publisher's analytics per snapshot and UTC day. */
export const templateDailyStats = sqliteTable("template_daily_stats", {
  snapshotId: text("snapshot_id").notNull(),
  publisherHumanId: text("publisher_human_id").notNull(),
  /** `YYYY-MM-DD`, UTC. */
  day: text("day").notNull(),
  tries: integer("tries").notNull(),
  installs: integer("installs").notNull(),
  views: integer("views").notNull(),
}, (t) => [
  primaryKey({ columns: [t.snapshotId, t.day] }),
  index("template_daily_stats_publisher").on(t.publisherHumanId, t.day),
]);

/** The publisher's tries and installs per snapshot, UTC day and the caller's country ("" when unknown). */
export const templateRegionStats = sqliteTable("template_region_stats", {
  snapshotId: text("snapshot_id").notNull(),
  publisherHumanId: text("publisher_human_id").notNull(),
  day: text("day").notNull(),
  region: text("region").notNull(),
  tries: integer("tries").notNull(),
  installs: integer("installs").notNull(),
}, (t) => [
  primaryKey({ columns: [t.snapshotId, t.day, t.region] }),
  index("template_region_stats_publisher").on(t.publisherHumanId, t.day),
]);
