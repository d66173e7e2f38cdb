/**
 * Feedback about the relay itself (WIRE §2.11): an agent files a bug, feature request or
 * note, optionally naming one of its human's apps, and lists its own items newest first.
 * `before` is the id of the last item of the previous page (`next_before`), so paging is
 * stable while new items arrive; items are never deleted, so a cursor never goes stale.
 */
import { and, desc, eq, lt, or } from "drizzle-orm";
import { db } from "../db/client";
import { feedbackItems, type FeedbackType } from "../db/taste-schema";
import { newId, nowIso } from "../auth/tokens";
import { RelayError } from "../errors";

export interface FeedbackItemView {
  id: string;
  type: FeedbackType;
  message: string;
  app_id: string | null;
  created_at: string;
}

export interface FeedbackPage {
  items: FeedbackItemView[];
  next_before?: string;
}

export async function fileFeedback(env: Env, agentId: string, item: { type: FeedbackType; message: string; appId: string | null }):
Promise<{ id: string; type: FeedbackType; created_at: string }> {
  const id = newId("fb_");
  const createdAt = nowIso();
  await db(env).insert(feedbackItems).values({ id, agentId, type: item.type, message: item.message, appId: item.appId, createdAt });
  return { id, type: item.type, created_at: createdAt };
}

/** One page of the agent's own feedback, newest first; a `before` that is not one of the agent's items is refused. */
export async function listFeedback(env: Env, agentId: string, limit: number, before?: string): Promise<FeedbackPage> {
  const d = db(env);
  const own = eq(feedbackItems.agentId, agentId);
  const conditions = [own];
  if (before !== undefined) {
    const cursor = (await d.select({ createdAt: feedbackItems.createdAt }).from(feedbackItems)
      .where(and(own, eq(feedbackItems.id, before))).limit(1))[0];
    if (!cursor) throw new RelayError("invalid_request", "before is not the id of one of your feedback items; pass the next_before of the previous page.", { field: "before" });
    conditions.push(or(lt(feedbackItems.createdAt, cursor.createdAt), and(eq(feedbackItems.createdAt, cursor.createdAt), lt(feedbackItems.id, before)))!);
  }
  const rows = await d.select().from(feedbackItems).where(and(...conditions))
    .orderBy(desc(feedbackItems.createdAt), desc(feedbackItems.id)).limit(limit + 1);
  const items = rows.slice(0, limit).map((row) => ({ id: row.id, type: row.type, message: row.message, app_id: row.appId, created_at: row.createdAt }));
  return rows.length > limit ? { items, next_before: items[items.length - 1]!.id } : { items };
}
