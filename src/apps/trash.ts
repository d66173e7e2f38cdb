/**
 * The app trash: a deleted app keeps all its data for TRASH_DAYS, can be restored until
 * then, and is purged for good afterwards — by its owner at once, or by the daily sweep.
 * One purge path for both, so nothing of an app outlives it. Moving an app to the trash,
 * restoring it and purging it by its owner live here too, so the /v1 routes and the
 * owner console act alike.
 */
import { deleteAppOperations } from "./operations-cleanup";
import { eq } from "drizzle-orm";
import { config } from "../config";
import { RelayError } from "../errors";
import { errorLogLine } from "../db/query-errors";
import { db } from "../db/client";
import { apps, appVersions } from "../db/apps-schema";
import { findAppForOwner, ownsApp, restoreApp, updateApp, type AppRow, type AppStatus } from "../db/apps";
import { nowIso } from "../auth/tokens";
import { appStore } from "./store";
import { refusalFor } from "./hand-over";
import { endAllSockets } from "./sockets";
import { deleteAppAccess } from "../db/grant-links";
import { deleteAppConnections } from "../db/connections";
import { deleteAppMembers } from "../db/members";
import { deleteAppAccountData } from "../account/app-data";
import { deleteAppNotifications } from "../effects/notify/retention";
import { deleteAppHooks } from "../effects/ingest/hooks";
import { deleteAppWebhookSecret } from "../effects/webhooks/secret";
import { purgeAppAttachments } from "../blobs/attachments";

export const TRASH_DAYS = 30;
const DAY_MS = 86_400_000;

export function purgeAfter(deletedAt: string): string {
  return new Date(Date.parse(deletedAt) + TRASH_DAYS * DAY_MS).toISOString();
}

/** Moves an app to the trash (a deleted app stays as it is); its watchers stop at once. */
export async function trashApp(env: Env, app: AppRow): Promise<AppRow> {
  if (app.status === "deleted") return app;
  const deleted = await updateApp(env, app.id, { status: "deleted", statusBeforeDelete: app.status, deletedAt: nowIso() });
  // Its watchers stop, and calls checked before the move are turned away.
  await endAllSockets(env, app.id, "app trashed");
  return deleted;
}

/**
 * Brings a trashed app back with all its data, in the status it had (a live app is
 * answered as it is). The account's app cap is checked in the same statement that
 * restores, so concurrent restores or creates cannot pass it together.
 */
export async function restoreTrashedApp(env: Env, app: AppRow): Promise<AppRow> {
  if (app.status !== "deleted") return app;
  const cap = config(env).limits.MAX_APPS_PER_ACCOUNT;
  const restored = await restoreApp(env, app, (app.statusBeforeDelete as AppStatus | null) ?? "active", cap);
  if (restored) return restored;
  const again = await findAppForOwner(env, app.ownerHumanId, app.id);
  if (again && again.status !== "deleted") return again;
  if (!again) throw new RelayError("app_not_found", `No app "${app.id}" is visible to you.`, { app: app.id });
  throw await refusalFor(env, app.ownerHumanId,
    new RelayError("account_quota_exceeded", `This account already has ${cap} apps; delete one before restoring.`, { limit: cap, resource: "apps" }));
}

/** Refuses an app that is not in the trash: only a trashed app can be purged. */
export function requireTrashed(app: AppRow): AppRow {
  if (app.status !== "deleted") throw new RelayError("conflict", "Only a deleted app can be purged; delete it first.", { status: app.status });
  return app;
}

/** Destroys a trashed app now, irreversibly; a live app must be trashed first. */
export async function purgeTrashedApp(env: Env, app: AppRow): Promise<void> {
  await purgeApp(env, requireTrashed(app).id);
}

/**
 * The undo of a hidden app (owned by a placeholder: a create seeding its rows, an import
 * filling it) whose maker gave up: purged while the placeholder still owns it. One that is
 * no longer hidden was handed over (the hand-over landed though its answer was lost) and
 * is its person's now, so it stays. When even that cannot be read, the app is left: the
 * sweep purges a hidden app once its window has passed, and never a handed-over one.
 */
export async function purgeIfStillHidden(env: Env, appId: string, placeholder: string, maker: string): Promise<void> {
  try {
    if (await ownsApp(env, placeholder, appId)) await purgeApp(env, appId);
  } catch (err) {
    console.error(`${maker}: the hidden app ${appId} was not purged; its sweep will`, errorLogLine(err));
  }
}

/** Rows, feed and storage in the AppStore first, then the registry records. */
export async function purgeApp(env: Env, appId: string): Promise<void> {
  await appStore(env, appId).closeWatchers("reconnect");
  await appStore(env, appId).destroy();
  await deleteAppAccess(env, appId);
  await deleteAppConnections(env, appId);
  await deleteAppMembers(env, appId);
  await deleteAppAccountData(env, appId);
  await deleteAppNotifications(env, appId);
  await deleteAppHooks(env, appId);
  await deleteAppWebhookSecret(env, appId);
  await purgeAppAttachments(env, appId);
  await deleteAppOperations(env, appId);
  await deleteAppRecord(env, appId);
}

/** The app's own D1 rows, its versions and itself, in one batch. */
async function deleteAppRecord(env: Env, appId: string): Promise<void> {
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
