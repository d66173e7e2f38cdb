/**
 * The D1 side of the agent task queue (src/effects/tasks/, WIRE §2.8, §5.5 agentTasks):
 * one row per task an agentTasks rule made from a row change. The task carries what its
 * envelope needs (the rule's prompt, reads and writes as they were when it fired, the
 * triggering row), its place in the queue (status, attempts, when it may next be
 * claimed, until when it may be claimed at all) and, while it is leased, the sha256 of
 * its lease credential and when the lease ends. D1 holds it, not the app's store,
 * because a claim drains every app of an owner in one statement.
 */
import { sqliteTable, text, integer, index, uniqueIndex } from "drizzle-orm/sqlite-core";

export const TASK_STATUSES = ["queued", "leased", "done", "dead", "expired", "discarded", "capped"] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/**
 * `source` is the outbox entry that made the task, unique per app so a redelivered queue
 * message never makes a second. Times are ms since the epoch. `status`: queued (claimable
 * from `availableAt`), leased (until `leaseExpiresAt`), done (acked), dead (out of
 * attempts), expired (not claimed within its ttl), discarded (its rule left the manifest
 * or its prompt changed) and capped (over the app's hourly cap, never claimable).
 */
export const agentTasks = sqliteTable("agent_tasks", {
  id: text("id").primaryKey(),
  appId: text("app_id").notNull(),
  source: text("source").notNull(),
  ruleId: text("rule_id").notNull(),
  taskType: text("task_type").notNull(),
  prompt: text("prompt").notNull(),
  collection: text("collection").notNull(),
  rowKey: text("row_key").notNull(),
  op: text("op").notNull(),
  context: text("context").notNull(),
  reads: text("reads").notNull(),
  writes: text("writes").notNull(),
  leaseSeconds: integer("lease_seconds").notNull(),
  status: text("status", { enum: TASK_STATUSES }).notNull(),
  attempts: integer("attempts").notNull().default(0),
  availableAt: integer("available_at").notNull(),
  expiresAt: integer("expires_at"),
  leaseExpiresAt: integer("lease_expires_at"),
  leaseTokenHash: text("lease_token_hash"),
  leasedBy: text("leased_by"),
  report: text("report"),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
  finishedAt: integer("finished_at"),
}, (t) => [
  uniqueIndex("agent_tasks_source").on(t.appId, t.source),
  index("agent_tasks_claimable").on(t.status, t.availableAt),
  index("agent_tasks_row").on(t.appId, t.collection, t.rowKey),
  index("agent_tasks_app_created").on(t.appId, t.createdAt),
  index("agent_tasks_lease_token").on(t.leaseTokenHash),
]);
