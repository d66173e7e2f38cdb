/**
 * Browser push subscriptions, saved per person (spec B "Browser push"). A subscription
 * is what `PushSubscription.toJSON()` gives a page: `{ endpoint, expirationTime, keys:
 * { p256dh, auth } }`. The endpoint identifies the browser: saving it again updates the
 * keys (200), and saving one another account had saved moves it to this account (the
 * browser now belongs to whoever signed in last; 201). Each account keeps at most
 * MAX_PUSH_SUBSCRIPTIONS; beyond that the least recently saved one goes. A subscription
 * its push service reports gone is deleted by endpoint (src/effects/notify/push.ts says
 * when).
 */
import { and, asc, eq } from "drizzle-orm";
import { db } from "../db/client";
import { pushSubscriptions } from "../db/account-schema";
import { newId, nowIso } from "../auth/tokens";

type Row = typeof pushSubscriptions.$inferSelect;

export const MAX_PUSH_SUBSCRIPTIONS = 20;

export interface SubscriptionInput {
  endpoint: string;
  p256dh: string;
  auth: string;
  expiresAt: string | null;
}

export interface SubscriptionView {
  id: string;
  endpoint: string;
  expires_at: string | null;
  created_at: string;
  updated_at: string;
}

function view(row: Row): SubscriptionView {
  return { id: row.id, endpoint: row.endpoint, expires_at: row.expiresAt, created_at: row.createdAt, updated_at: row.updatedAt };
}

export async function saveSubscription(env: Env, humanId: string, input: SubscriptionInput): Promise<{ created: boolean; subscription: SubscriptionView }> {
  const d = db(env);
  const now = nowIso();
  const existing = (await d.select().from(pushSubscriptions).where(eq(pushSubscriptions.endpoint, input.endpoint)).limit(1))[0];
  if (existing?.humanId === humanId) {
    const rows = await d.update(pushSubscriptions).set({ p256dh: input.p256dh, auth: input.auth, expiresAt: input.expiresAt, updatedAt: now })
      .where(eq(pushSubscriptions.id, existing.id)).returning();
    return { created: false, subscription: view(rows[0]) };
  }
  const row: Row = { id: newId("ps_"), humanId, endpoint: input.endpoint, p256dh: input.p256dh, auth: input.auth, expiresAt: input.expiresAt, createdAt: now, updatedAt: now };
  await d.batch([
    d.delete(pushSubscriptions).where(eq(pushSubscriptions.endpoint, input.endpoint)),
    d.insert(pushSubscriptions).values(row),
  ]);
  const mine = await d.select({ id: pushSubscriptions.id }).from(pushSubscriptions).where(eq(pushSubscriptions.humanId, humanId))
    .orderBy(asc(pushSubscriptions.updatedAt), asc(pushSubscriptions.id));
  for (const old of mine.slice(0, Math.max(0, mine.length - MAX_PUSH_SUBSCRIPTIONS))) {
    await d.delete(pushSubscriptions).where(eq(pushSubscriptions.id, old.id));
  }
  return { created: true, subscription: view(row) };
}

/** Deletes this person's subscription for the endpoint (idempotent; another person's is untouched). */
export async function deleteSubscription(env: Env, humanId: string, endpoint: string): Promise<void> {
  await db(env).delete(pushSubscriptions).where(and(eq(pushSubscriptions.humanId, humanId), eq(pushSubscriptions.endpoint, endpoint)));
}

/**
 * Deletes the subscription for an endpoint its push service answered 404 or 410 to: the
 * browser has dropped it, whoever had saved it. True when a row was deleted.
 */
export async function deleteGoneSubscription(env: Env, endpoint: string): Promise<boolean> {
  const gone = await db(env).delete(pushSubscriptions).where(eq(pushSubscriptions.endpoint, endpoint)).returning({ id: pushSubscriptions.id });
  return gone.length > 0;
}
