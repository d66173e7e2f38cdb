/**
 * The D1 schema (drizzle): identity and metadata that must be looked up globally —
 * humans and their sessions, agents and their keys (sha256 only), one-time codes,
 * the per-IP limiter's windows and the development mail outbox. Row data never lives
 * here; it belongs to each app's AppStore Durable Object.
 */
import { sqliteTable, text, integer, index, uniqueIndex, primaryKey } from "drizzle-orm/sqlite-core";

export const humans = sqliteTable("humans", {
  id: text("id").primaryKey(),
  email: text("email").notNull(),
  name: text("name"),
  emailVerifiedAt: text("email_verified_at"),
  marketingConsent: integer("marketing_consent", { mode: "boolean" }).notNull().default(false),
  createdAt: text("created_at").notNull(),
}, (t) => [uniqueIndex("humans_email").on(t.email)]);

export const agents = sqliteTable("agents", {
  id: text("id").primaryKey(),
  name: text("name"),
  ownerHumanId: text("owner_human_id"),
  claimedAt: text("claimed_at"),
  pausedAt: text("paused_at"),
  registeredVia: text("registered_via", { enum: ["direct", "device"] }).notNull(),
  createdAt: text("created_at").notNull(),
}, (t) => [index("agents_owner").on(t.ownerHumanId)]);

export const agentKeys = sqliteTable("agent_keys", {
  id: text("id").primaryKey(),
  agentId: text("agent_id").notNull(),
  keyHash: text("key_hash").notNull(),
  keyPrefix: text("key_prefix").notNull(),
  createdAt: text("created_at").notNull(),
  lastUsedAt: text("last_used_at"),
  revokedAt: text("revoked_at"),
}, (t) => [uniqueIndex("agent_keys_hash").on(t.keyHash), index("agent_keys_agent").on(t.agentId)]);

export const sessions = sqliteTable("sessions", {
  id: text("id").primaryKey(),
  humanId: text("human_id").notNull(),
  tokenHash: text("token_hash").notNull(),
  createdAt: text("created_at").notNull(),
  expiresAt: text("expires_at").notNull(),
  revokedAt: text("revoked_at"),
}, (t) => [uniqueIndex("sessions_token").on(t.tokenHash), index("sessions_human").on(t.humanId)]);

export const magicLinks = sqliteTable("magic_links", {
  tokenHash: text("token_hash").primaryKey(),
  email: text("email").notNull(),
  returnTo: text("return_to"),
  createdAt: text("created_at").notNull(),
  expiresAt: text("expires_at").notNull(),
  usedAt: text("used_at"),
});

export const claimCodes = sqliteTable("claim_codes", {
  codeHash: text("code_hash").primaryKey(),
  humanId: text("human_id").notNull(),
  createdAt: text("created_at").notNull(),
  expiresAt: text("expires_at").notNull(),
  usedAt: text("used_at"),
  usedByAgentId: text("used_by_agent_id"),
});

export const deviceCodes = sqliteTable("device_codes", {
  deviceCodeHash: text("device_code_hash").primaryKey(),
  userCode: text("user_code").notNull(),
  name: text("name").notNull(),
  status: text("status", { enum: ["pending", "approved", "denied", "consumed"] }).notNull(),
  humanId: text("human_id"),
  agentId: text("agent_id"),
  intervalSeconds: integer("interval_seconds").notNull(),
  lastPolledAt: integer("last_polled_at"),
  createdAt: text("created_at").notNull(),
  expiresAt: text("expires_at").notNull(),
}, (t) => [uniqueIndex("device_codes_user_code").on(t.userCode)]);

export const rateLimitWindows = sqliteTable("rate_limit_windows", {
  bucket: text("bucket").notNull(),
  windowStart: integer("window_start").notNull(),
  hits: integer("hits").notNull(),
}, (t) => [primaryKey({ columns: [t.bucket, t.windowStart] })]);

export const devMail = sqliteTable("dev_mail", {
  id: text("id").primaryKey(),
  to: text("to").notNull(),
  subject: text("subject").notNull(),
  text: text("text").notNull(),
  html: text("html").notNull(),
  createdAt: text("created_at").notNull(),
}, (t) => [index("dev_mail_to").on(t.to, t.createdAt)]);
