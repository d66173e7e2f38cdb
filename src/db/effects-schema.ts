/**
 * The D1 side of the outbound webhook engine (src/effects/webhooks/): each app's signing
 * secrets, the delivery journal (one row per delivery, svix's message model) with every
 * attempt beside it, and when the owner was last mailed about a rule's failed deliveries.
 * A delivery's payload lives here, not in any queue message: a message only names it.
 */
import { sqliteTable, text, integer, index, uniqueIndex, primaryKey } from "drizzle-orm/sqlite-core";

/** The current secret and, for a rotation's grace window, the one before it (WIRE §6.2). */
export const webhookSecrets = sqliteTable("webhook_secrets", {
  appId: text("app_id").primaryKey(),
  secret: text("secret").notNull(),
  previousSecret: text("previous_secret"),
  previousExpiresAt: text("previous_expires_at"),
  createdAt: text("created_at").notNull(),
  rotatedAt: text("rotated_at"),
});

/**
 * One delivery: a rule fired by one change (or a replay of one), its target and its exact
 * body, its status and the last attempt's outcome. `source` is what created it (the
 * outbox entry's id, or `replay:<id>`), unique so a redelivered queue message never makes
 * a second one. `nextAttemptAt` is when the next attempt is due (ms; null once terminal);
 * `scheduledFor` is the due time a queue message was last sent for, so a redelivered
 * message does not schedule a second.
 */
export const webhookDeliveries = sqliteTable("webhook_deliveries", {
  id: text("id").primaryKey(),
  appId: text("app_id").notNull(),
  source: text("source").notNull(),
  ruleId: text("rule_id").notNull(),
  collection: text("collection").notNull(),
  rowKey: text("row_key").notNull(),
  op: text("op").notNull(),
  feedSeq: integer("feed_seq"),
  url: text("url").notNull(),
  connection: text("connection"),
  payload: text("payload").notNull(),
  status: text("status", { enum: ["pending", "delivered", "failed"] }).notNull(),
  attempts: integer("attempts").notNull().default(0),
  responseStatus: integer("response_status"),
  responseBody: text("response_body"),
  error: text("error"),
  replayOfId: text("replay_of_id"),
  createdAt: text("created_at").notNull(),
  deliveredAt: text("delivered_at"),
  lastAttemptAt: text("last_attempt_at"),
  nextAttemptAt: integer("next_attempt_at"),
  scheduledFor: integer("scheduled_for"),
}, (t) => [
  uniqueIndex("webhook_deliveries_source").on(t.appId, t.source),
  index("webhook_deliveries_app_created").on(t.appId, t.createdAt),
  index("webhook_deliveries_due").on(t.status, t.nextAttemptAt),
]);

/** Every attempt of a delivery, in order: when, what came back, how long it took. */
export const webhookAttempts = sqliteTable("webhook_attempts", {
  deliveryId: text("delivery_id").notNull(),
  attempt: integer("attempt").notNull(),
  at: text("at").notNull(),
  responseStatus: integer("response_status"),
  error: text("error"),
  durationMs: integer("duration_ms").notNull(),
}, (t) => [primaryKey({ columns: [t.deliveryId, t.attempt] })]);

/** When the owner was last mailed that a rule's delivery failed for good (once per window). */
export const webhookFailureNotices = sqliteTable("webhook_failure_notices", {
  appId: text("app_id").notNull(),
  ruleId: text("rule_id").notNull(),
  notifiedAt: text("notified_at").notNull(),
}, (t) => [primaryKey({ columns: [t.appId, t.ruleId] })]);
