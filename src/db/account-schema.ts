/**
 * The D1 schema of the account and ownership parts: ownership transfers (an offer mailed
 * to an address, accepted by that address), organizations and their members, each
 * person's own marks on apps (favorites, views, dismissed upgrade badges), the signup
 * answer, browser push subscriptions, pending account deletions, preview tokens of
 * private apps, flow counters for usage, and relay-wide generated keys (the development
 * VAPID key). Every token here is a secret: only its sha256 is stored.
 */
import { sqliteTable, text, integer, index, uniqueIndex, primaryKey } from "drizzle-orm/sqlite-core";

/** One offer to move an app to the account of `to_email`. At most one is pending per app. */
export const appTransfers = sqliteTable("app_transfers", {
  id: text("id").primaryKey(),
  appId: text("app_id").notNull(),
  fromHumanId: text("from_human_id").notNull(),
  /** Normalised (trimmed, lowercased). */
  toEmail: text("to_email").notNull(),
  tokenHash: text("token_hash").notNull(),
  /** The previous owner stays on the app as a member after the move (default) or leaves it. */
  keepAsMember: integer("keep_as_member", { mode: "boolean" }).notNull(),
  status: text("status", { enum: ["pending", "accepted", "withdrawn"] }).notNull(),
  createdByAgentId: text("created_by_agent_id"),
  createdAt: text("created_at").notNull(),
  expiresAt: text("expires_at").notNull(),
  resolvedAt: text("resolved_at"),
  acceptedByHumanId: text("accepted_by_human_id"),
}, (t) => [
  uniqueIndex("app_transfers_token").on(t.tokenHash),
  index("app_transfers_app").on(t.appId, t.status),
]);

export const orgs = sqliteTable("orgs", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  /** The account billed for the organization: its creator, while they stay an admin. */
  billingHumanId: text("billing_human_id").notNull(),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

export const orgMembers = sqliteTable("org_members", {
  orgId: text("org_id").notNull(),
  humanId: text("human_id").notNull(),
  role: text("role", { enum: ["admin", "member"] }).notNull(),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
}, (t) => [
  primaryKey({ columns: [t.orgId, t.humanId] }),
  index("org_members_human").on(t.humanId),
]);

export const appFavorites = sqliteTable("app_favorites", {
  humanId: text("human_id").notNull(),
  appId: text("app_id").notNull(),
  createdAt: text("created_at").notNull(),
}, (t) => [primaryKey({ columns: [t.humanId, t.appId] }), index("app_favorites_app").on(t.appId)]);

export const appViews = sqliteTable("app_views", {
  humanId: text("human_id").notNull(),
  appId: text("app_id").notNull(),
  lastViewedAt: text("last_viewed_at").notNull(),
  viewCount: integer("view_count").notNull(),
}, (t) => [
  primaryKey({ columns: [t.humanId, t.appId] }),
  index("app_views_recent").on(t.humanId, t.lastViewedAt),
  index("app_views_app").on(t.appId),
]);

/** The template version whose upgrade badge the person dismissed on an app. */
export const upgradeDismissals = sqliteTable("upgrade_dismissals", {
  humanId: text("human_id").notNull(),
  appId: text("app_id").notNull(),
  version: text("version").notNull(),
  dismissedAt: text("dismissed_at").notNull(),
}, (t) => [primaryKey({ columns: [t.humanId, t.appId] }), index("upgrade_dismissals_app").on(t.appId)]);

/** The optional one-time answer to "how did you hear of the service". */
export const signupSources = sqliteTable("signup_sources", {
  humanId: text("human_id").primaryKey(),
  source: text("source").notNull(),
  detail: text("detail"),
  createdAt: text("created_at").notNull(),
});

export const pushSubscriptions = sqliteTable("push_subscriptions", {
  id: text("id").primaryKey(),
  humanId: text("human_id").notNull(),
  endpoint: text("endpoint").notNull(),
  p256dh: text("p256dh").notNull(),
  auth: text("auth").notNull(),
  /** The browser's expirationTime, as an ISO time; null when it gave none. */
  expiresAt: text("expires_at"),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
}, (t) => [uniqueIndex("push_subscriptions_endpoint").on(t.endpoint), index("push_subscriptions_human").on(t.humanId)]);

/** A mailed confirmation of `DELETE /v1/self`; one per person (a new request replaces it). */
export const accountDeletions = sqliteTable("account_deletions", {
  humanId: text("human_id").primaryKey(),
  tokenHash: text("token_hash").notNull(),
  createdAt: text("created_at").notNull(),
  expiresAt: text("expires_at").notNull(),
}, (t) => [uniqueIndex("account_deletions_token").on(t.tokenHash)]);

/** Lets an anonymous viewer open one private app until it expires or is revoked. */
export const previewTokens = sqliteTable("preview_tokens", {
  id: text("id").primaryKey(),
  appId: text("app_id").notNull(),
  tokenHash: text("token_hash").notNull(),
  label: text("label"),
  createdByAgentId: text("created_by_agent_id"),
  createdAt: text("created_at").notNull(),
  expiresAt: text("expires_at").notNull(),
  revokedAt: text("revoked_at"),
}, (t) => [uniqueIndex("preview_tokens_token").on(t.tokenHash), index("preview_tokens_app").on(t.appId)]);

/** Flow counters (mail sent, webhook deliveries, ...) per owner, app, UTC hour and metric. */
export const usageFlows = sqliteTable("usage_flows", {
  humanId: text("human_id").notNull(),
  appId: text("app_id").notNull(),
  /** The UTC hour, `YYYY-MM-DDTHH`. */
  hour: text("hour").notNull(),
  metric: text("metric").notNull(),
  count: integer("count").notNull(),
}, (t) => [primaryKey({ columns: [t.humanId, t.hour, t.metric, t.appId] })]);

/** Relay-wide generated material kept across restarts (development VAPID key). */
export const relayKeys = sqliteTable("relay_keys", {
  name: text("name").primaryKey(),
  value: text("value").notNull(),
  createdAt: text("created_at").notNull(),
});
