/**
 * The D1 schema of the app registry: each app (slug, owner, visibility, lifecycle status,
 * live version) and its immutable versions (manifest, document and asset index). Bytes
 * live in R2, content-addressed; rows live in the app's AppStore Durable Object.
 */
import { sqliteTable, text, integer, index, uniqueIndex, primaryKey } from "drizzle-orm/sqlite-core";

export const apps = sqliteTable("apps", {
  id: text("id").primaryKey(),
  slug: text("slug").notNull(),
  ownerHumanId: text("owner_human_id").notNull(),
  createdByAgentId: text("created_by_agent_id").notNull(),
  visibility: text("visibility", { enum: ["private", "link", "public"] }).notNull(),
  status: text("status", { enum: ["active", "dormant", "archived", "suspended", "deleted"] }).notNull(),
  currentVersion: integer("current_version"),
  timezone: text("timezone"),
  shareTokenHash: text("share_token_hash"),
  createdAt: text("created_at").notNull(),
  lastActivityAt: text("last_activity_at").notNull(),
  deletedAt: text("deleted_at"),
  statusBeforeDelete: text("status_before_delete"),
}, (t) => [
  uniqueIndex("apps_slug").on(t.slug),
  index("apps_owner_activity").on(t.ownerHumanId, t.lastActivityAt),
]);

/** One deployed version. The asset index is JSON: [{ path, sha256, size, mime }]. */
export const appVersions = sqliteTable("app_versions", {
  appId: text("app_id").notNull(),
  version: integer("version").notNull(),
  manifestJson: text("manifest_json").notNull(),
  documentSha256: text("document_sha256").notNull(),
  documentBytes: integer("document_bytes").notNull(),
  assetsJson: text("assets_json").notNull(),
  sourceHash: text("source_hash").notNull(),
  compat: text("compat", { enum: ["new", "clean", "forced"] }).notNull(),
  breaksJson: text("breaks_json"),
  createdByAgentId: text("created_by_agent_id").notNull(),
  createdAt: text("created_at").notNull(),
}, (t) => [primaryKey({ columns: [t.appId, t.version] })]);
