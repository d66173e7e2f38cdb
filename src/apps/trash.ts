/**
 * The app trash: a deleted app keeps all its data for TRASH_DAYS, can be restored until
 * then, and is purged for good afterwards — by its owner at once, or by the daily sweep.
 * One purge path for both, so nothing of an app outlives it.
 */
import { eq } from "drizzle-orm";
import { db } from "../db/client";
import { apps, appVersions } from "../db/apps-schema";
import { appStore } from "./store";
import { deleteAppAccess } from "../db/grant-links";
import { deleteAppMembers } from "../db/members";
import { deleteAppAccountData } from "../account/app-data";

export const TRASH_DAYS = 30;
const DAY_MS = 86_400_000;

export function purgeAfter(deletedAt: string): string {
  return new Date(Date.parse(deletedAt) + TRASH_DAYS * DAY_MS).toISOString();
}

/** Rows, feed and storage in the AppStore first, then the registry records. */
export async function purgeApp(env: Env, appId: string): Promise<void> {
  await appStore(env, appId).closeWatchers("reconnect");
  await appStore(env, appId).destroy();
  await deleteAppAccess(env, appId);
  await deleteAppMembers(env, appId);
  await deleteAppAccountData(env, appId);
  const d = db(env);
  await d.batch([d.delete(appVersions).where(eq(appVersions.appId, appId)), d.delete(apps).where(eq(apps.id, appId))]);
}

/** Purges every app whose trash window has passed; returns how many went. */
export async function purgeExpiredTrash(env: Env, now = Date.now(), batch = 50): Promise<number> {
  const cutoff = new Date(now - TRASH_DAYS * DAY_MS).toISOString();
  const due = await env.DB.prepare("SELECT id FROM apps WHERE status = 'deleted' AND deleted_at < ?1 LIMIT ?2").bind(cutoff, batch).all<{ id: string }>();
  for (const { id } of due.results) await purgeApp(env, id);
  return due.results.length;
}
