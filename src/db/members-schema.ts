/**
 * The D1 schema of app membership: who besides the owner may open a private app, with
 * which custom roles (WIRE §2.5), and the pending invitations of people who have no
 * account yet. An invitation stores only the sha256 of its token; there is at most one
 * row per (app, email), so inviting the same address again replaces the token and the
 * expiry (the older link stops working) instead of piling up links.
 */
import { sqliteTable, text, index, uniqueIndex, primaryKey } from "drizzle-orm/sqlite-core";

export const appMembers = sqliteTable("app_members", {
  appId: text("app_id").notNull(),
  humanId: text("human_id").notNull(),
  /** JSON array of custom role names, in the order they were assigned (≤ 8). */
  customRoles: text("custom_roles").notNull(),
  /** When this membership began; app sessions issued before it are not accepted. */
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
}, (t) => [
  primaryKey({ columns: [t.appId, t.humanId] }),
  index("app_members_human").on(t.humanId),
]);

export const appInvites = sqliteTable("app_invites", {
  appId: text("app_id").notNull(),
  /** Normalised (trimmed, lowercased). */
  email: text("email").notNull(),
  tokenHash: text("token_hash").notNull(),
  /** JSON array of the custom roles the member gets on acceptance. */
  customRoles: text("custom_roles").notNull(),
  invitedByHumanId: text("invited_by_human_id").notNull(),
  invitedByAgentId: text("invited_by_agent_id"),
  createdAt: text("created_at").notNull(),
  expiresAt: text("expires_at").notNull(),
  usedAt: text("used_at"),
  acceptedHumanId: text("accepted_human_id"),
}, (t) => [
  primaryKey({ columns: [t.appId, t.email] }),
  uniqueIndex("app_invites_token").on(t.tokenHash),
]);
