/**
 * The D1 side of attachments (WIRE §2.9, src/blobs/): one row per uploaded file, whose
 * bytes live in R2 under `attachments/<id>`, and one row per capability token minted for
 * it. D1 holds them because listing, quotas and app purges cut across apps and agents.
 */
import { sqliteTable, text, integer, index } from "drizzle-orm/sqlite-core";

export const ATTACHMENT_SCOPES = ["agent", "app"] as const;
export type AttachmentScope = (typeof ATTACHMENT_SCOPES)[number];
export const ATTACHMENT_STATUSES = ["pending", "ready"] as const;
export type AttachmentStatus = (typeof ATTACHMENT_STATUSES)[number];

/**
 * `accountId` is whose quota the bytes count against: the owning human, or the agent
 * itself while nobody has claimed it. `ownerAgentId` is the agent that uploaded (null for
 * an upload from an app page). `uploaderKind`/`uploaderId` say who sent the bytes;
 * `anonAddressHash` keys an anonymous visitor's daily upload count. A presigned upload
 * is `pending` with the sha256 of its upload secret until it is confirmed. Times are ms
 * since the epoch.
 */
export const attachments = sqliteTable("attachments", {
  id: text("id").primaryKey(),
  scope: text("scope", { enum: ATTACHMENT_SCOPES }).notNull(),
  accountId: text("account_id").notNull(),
  ownerAgentId: text("owner_agent_id"),
  appId: text("app_id"),
  uploaderKind: text("uploader_kind").notNull(),
  uploaderId: text("uploader_id"),
  anonAddressHash: text("anon_address_hash"),
  filename: text("filename"),
  mime: text("mime").notNull(),
  size: integer("size").notNull(),
  sha256: text("sha256").notNull(),
  status: text("status", { enum: ATTACHMENT_STATUSES }).notNull(),
  uploadSecretHash: text("upload_secret_hash"),
  uploadExpiresAt: integer("upload_expires_at"),
  width: integer("width"),
  height: integer("height"),
  createdAt: integer("created_at").notNull(),
  confirmedAt: integer("confirmed_at"),
  deletedAt: integer("deleted_at"),
}, (t) => [
  index("attachments_agent").on(t.ownerAgentId, t.createdAt),
  index("attachments_account").on(t.accountId),
  index("attachments_app").on(t.appId),
  index("attachments_pending").on(t.status, t.uploadExpiresAt),
]);

/** A `/b/<token>` capability: only the token's sha256 is kept. */
export const attachmentTokens = sqliteTable("attachment_tokens", {
  id: text("id").primaryKey(),
  attachmentId: text("attachment_id").notNull(),
  tokenHash: text("token_hash").notNull().unique(),
  tokenPrefix: text("token_prefix").notNull(),
  once: integer("once", { mode: "boolean" }).notNull(),
  expiresAt: integer("expires_at").notNull(),
  createdAt: integer("created_at").notNull(),
  lastUsedAt: integer("last_used_at"),
  useCount: integer("use_count").notNull().default(0),
  revokedAt: integer("revoked_at"),
}, (t) => [index("attachment_tokens_attachment").on(t.attachmentId)]);
