/**
 * The D1 side of the notification engine (src/effects/notify/, WIRE §5.5 notify[]): one
 * row per recipient and channel of every fired notify rule, and the channels each person
 * muted per app. The rows are at once the work list (email and push wait here, `held`,
 * until the recipient's digest goes), the record (who was suppressed, muted, capped, and
 * why; what was sent and when) and, for the `inapp` channel, the person's inbox.
 */
import { sql } from "drizzle-orm";
import { sqliteTable, text, integer, index, uniqueIndex, primaryKey } from "drizzle-orm/sqlite-core";

export const NOTIFY_CHANNELS = ["email", "push", "inapp"] as const;

/**
 * - `held`: waiting for the recipient's digest (due at `dueAt`);
 * - `sending`: claimed into the digest `digestId` at `claimedAt`;
 * - `sent`: mailed or pushed at `sentAt` (for `inapp`: in the inbox since it was made);
 * - `suppressed`: the recipient may not read the row, or is no member of the app;
 * - `muted`: the recipient muted this channel for this app;
 * - `capped`: the app's hourly send cap was reached;
 * - `failed`: the send was tried and did not go (`reason` says why).
 */
export const NOTIFICATION_STATUSES = ["held", "sending", "sent", "suppressed", "muted", "capped", "failed"] as const;

/**
 * One notification: a rule fired by one change (`source`: the outbox entry's id), for one
 * recipient (`human:<id>`, or `address:<email>` for a rule's submitter) on one channel,
 * with its rendered subject and body. Unique by (app, source, channel, recipient), so a
 * redelivered queue message records nothing twice; a submitter gets at most one per row
 * per rule.
 */
export const notifications = sqliteTable("notifications", {
  id: text("id").primaryKey(),
  appId: text("app_id").notNull(),
  source: text("source").notNull(),
  ruleId: text("rule_id").notNull(),
  collection: text("collection").notNull(),
  rowKey: text("row_key").notNull(),
  op: text("op").notNull(),
  channel: text("channel", { enum: NOTIFY_CHANNELS }).notNull(),
  recipient: text("recipient").notNull(),
  humanId: text("human_id"),
  address: text("address"),
  subject: text("subject").notNull(),
  body: text("body").notNull(),
  link: text("link"),
  status: text("status", { enum: NOTIFICATION_STATUSES }).notNull(),
  reason: text("reason"),
  /** When the recipient's digest is due (ms); set while held. */
  dueAt: integer("due_at"),
  digestId: text("digest_id"),
  claimedAt: integer("claimed_at"),
  /** Sends of this notification's digest that failed and were tried again (src/effects/notify/digests.ts). */
  attempts: integer("attempts").notNull().default(0),
  createdAt: text("created_at").notNull(),
  sentAt: text("sent_at"),
  readAt: text("read_at"),
}, (t) => [
  uniqueIndex("notifications_source").on(t.appId, t.source, t.channel, t.recipient),
  uniqueIndex("notifications_submitter_once").on(t.appId, t.ruleId, t.rowKey).where(sql`${t.address} IS NOT NULL`),
  index("notifications_recipient").on(t.appId, t.channel, t.recipient, t.status),
  index("notifications_inbox").on(t.appId, t.humanId, t.channel, t.createdAt),
  index("notifications_due").on(t.status, t.dueAt),
  index("notifications_created").on(t.createdAt),
]);

/** A channel one person muted for one app (`notifications.preferences.set`, WIRE §4.2); absent means not muted. */
export const notifyMutes = sqliteTable("notify_mutes", {
  appId: text("app_id").notNull(),
  humanId: text("human_id").notNull(),
  channel: text("channel", { enum: NOTIFY_CHANNELS }).notNull(),
  createdAt: text("created_at").notNull(),
}, (t) => [primaryKey({ columns: [t.appId, t.humanId, t.channel] })]);
