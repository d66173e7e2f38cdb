/**
 * The D1 schema of delegated access to one app's data: service credentials (bearer
 * tokens a backend the owner hosts uses on the collection endpoints, scoped by an
 * allowlist) and grant links (a `#g=` URL conferring one declared custom role, exchanged
 * by each browser for a per-holder credential). Only sha256 hashes of the raw tokens are
 * stored; the raw values exist once, in the response that minted them.
 */
import { sqliteTable, text, integer, index, uniqueIndex } from "drizzle-orm/sqlite-core";

export const serviceCredentials = sqliteTable("service_credentials", {
  id: text("id").primaryKey(),
  appId: text("app_id").notNull(),
  label: text("label"),
  mode: text("mode", { enum: ["explicit", "following"] }).notNull(),
  /** JSON array of `{ collection, ops, scope? }`. */
  grantsJson: text("grants_json").notNull(),
  /** Member-directory access (spec A: default off). */
  members: integer("members", { mode: "boolean" }).notNull(),
  tokenHash: text("token_hash").notNull(),
  tokenPrefix: text("token_prefix").notNull(),
  /** The token a rotation replaced, valid until `previous_expires_at` (the overlap window). */
  previousTokenHash: text("previous_token_hash"),
  previousTokenPrefix: text("previous_token_prefix"),
  previousExpiresAt: text("previous_expires_at"),
  /** null: no expiry (an explicit opt-in at mint time). */
  expiresAt: text("expires_at"),
  pausedAt: text("paused_at"),
  revokedAt: text("revoked_at"),
  rotatedAt: text("rotated_at"),
  createdAt: text("created_at").notNull(),
  /** Who minted it: `agent:<id>` or `human:<id>`. */
  createdBy: text("created_by").notNull(),
  lastUsedAt: text("last_used_at"),
}, (t) => [
  index("service_credentials_app").on(t.appId, t.createdAt),
  uniqueIndex("service_credentials_token").on(t.tokenHash),
  index("service_credentials_previous_token").on(t.previousTokenHash),
]);

export const grantLinks = sqliteTable("grant_links", {
  id: text("id").primaryKey(),
  appId: text("app_id").notNull(),
  role: text("role").notNull(),
  mode: text("mode", { enum: ["once", "multi"] }).notNull(),
  /** null: unlimited (multi only); a once link is always 1. */
  maxUses: integer("max_uses"),
  /** Holders minted by exchange; `max_uses` caps it. */
  useCount: integer("use_count").notNull(),
  /** Exchanges answered, a remembered holder's repeat included. */
  claimCount: integer("claim_count").notNull(),
  label: text("label"),
  pinRowKey: text("pin_row_key"),
  /** JSON array of `{ field, op, value }`. */
  pinWhereJson: text("pin_where_json"),
  tokenHash: text("token_hash").notNull(),
  expiresAt: text("expires_at").notNull(),
  revokedAt: text("revoked_at"),
  createdAt: text("created_at").notNull(),
  createdBy: text("created_by").notNull(),
}, (t) => [
  index("grant_links_app").on(t.appId, t.createdAt),
  uniqueIndex("grant_links_token").on(t.tokenHash),
]);

/** One browser's credential from exchanging a grant link; lives as long as its link. */
export const grantHolders = sqliteTable("grant_holders", {
  id: text("id").primaryKey(),
  grantId: text("grant_id").notNull(),
  appId: text("app_id").notNull(),
  tokenHash: text("token_hash").notNull(),
  createdAt: text("created_at").notNull(),
}, (t) => [
  uniqueIndex("grant_holders_token").on(t.tokenHash),
  index("grant_holders_grant").on(t.grantId),
]);
