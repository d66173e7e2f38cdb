/**
 * How long notifications stay: each is kept NOTIFY_RETENTION_DAYS (its subject and body
 * hold row data rendered when its rule fired), and a purged app's notifications and its
 * people's mutes go with it, so nothing of an app outlives it.
 */
import { eq, sql } from "drizzle-orm";
import { config } from "../../config";
import { db } from "../../db/client";
import { notifications, notifyMutes } from "../../db/notify-schema";

/** Notifications older than NOTIFY_RETENTION_DAYS go, a bounded number per run (the `digests` sweep). */
export async function pruneNotifications(env: Env, now = Date.now(), batch = 1000): Promise<void> {
  const cutoff = new Date(now - config(env).limits.NOTIFY_RETENTION_DAYS * 86_400_000).toISOString();
  await db(env).delete(notifications).where(sql`${notifications.id} IN (SELECT id FROM notifications WHERE created_at < ${cutoff} LIMIT ${batch})`);
}

/** Everything the notify engine keeps for one app (its purge). */
export async function deleteAppNotifications(env: Env, appId: string): Promise<void> {
  const d = db(env);
  await d.batch([d.delete(notifications).where(eq(notifications.appId, appId)), d.delete(notifyMutes).where(eq(notifyMutes.appId, appId))]);
}
