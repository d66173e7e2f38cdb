/**
 * The D1 side of taste notes and feedback (spec A "Feedback and taste notes", WIRE §2.11).
 * Both belong to the agent identity that wrote them (every key of that agent shares them),
 * not to an app, so they live in D1 beside the agents rather than in any AppStore.
 * docs/taste-and-feedback.md says why the agent, not its human, holds them.
 */
import { sqliteTable, text, integer, index } from "drizzle-orm/sqlite-core";

/** One agent's taste notes: whole-replace markdown, at most MAX_TASTE_BYTES of UTF-8. No row means none. */
export const tasteNotes = sqliteTable("taste_notes", {
  agentId: text("agent_id").primaryKey(),
  notes: text("notes").notNull(),
  bytes: integer("bytes").notNull(),
  updatedAt: text("updated_at").notNull(),
});

export const FEEDBACK_TYPES = ["bug", "feature", "note"] as const;
export type FeedbackType = (typeof FEEDBACK_TYPES)[number];

/** One feedback item an agent filed about the relay; listed back to that agent only, newest first. */
export const feedbackItems = sqliteTable("feedback_items", {
  id: text("id").primaryKey(),
  agentId: text("agent_id").notNull(),
  type: text("type", { enum: FEEDBACK_TYPES }).notNull(),
  message: text("message").notNull(),
  appId: text("app_id"),
  createdAt: text("created_at").notNull(),
}, (t) => [index("feedback_items_agent").on(t.agentId, t.createdAt, t.id)]);
