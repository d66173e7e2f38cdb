/**
 * The signed-in person's own view of apps: the ones they own or joined (with role,
 * custom roles, favorite flag and when they last opened it), the ones they viewed
 * recently, their deleted ones, and their marks on them — favorites, views and dismissed
 * upgrade badges. An app is "visible" to a person when they own it (a deleted one is
 * 410 `soft_deleted`) or are a member of it while it is not deleted; anything else is
 * `app_not_found`, whether or not it exists.
 */
import { and, desc, eq, ne, or, sql } from "drizzle-orm";
import { inList } from "../db/in-list";
import type { Config } from "../config";
import { RelayError } from "../errors";
import { db } from "../db/client";
import { apps } from "../db/apps-schema";
import { appMembers } from "../db/members-schema";
import { appFavorites, appViews, upgradeDismissals } from "../db/account-schema";
import { findAppForOwner, listApps, type AppRow } from "../db/apps";
import { appsJoinedBy, membershipOf, parseRoles } from "../db/members";
import { nowIso } from "../auth/tokens";
import { viewSummary } from "../apps/views";
import { upgradePreview } from "../community/upgrade";

export interface Visible {
  app: AppRow;
  role: "owner" | "member";
  customRoles: string[];
}

export async function visibleApp(env: Env, humanId: string, idOrSlug: string): Promise<Visible> {
  const owned = await findAppForOwner(env, humanId, idOrSlug);
  if (owned) {
    if (owned.status === "deleted") {
      throw new RelayError("soft_deleted", "This app is in the trash; restore it first.", { app_id: owned.id, deleted_at: owned.deletedAt });
    }
    return { app: owned, role: "owner", customRoles: [] };
  }
  const app = (await db(env).select().from(apps).where(or(eq(apps.id, idOrSlug), eq(apps.slug, idOrSlug))).limit(1))[0];
  const membership = app && app.status !== "deleted" ? await membershipOf(env, app.id, humanId) : undefined;
  if (!app || !membership) throw new RelayError("app_not_found", `No app "${idOrSlug.slice(0, 100)}" is visible to you.`, { app: idOrSlug.slice(0, 100) });
  return { app, role: "member", customRoles: membership.customRoles };
}

interface Marks {
  favorites: Set<string>;
  views: Map<string, { lastViewedAt: string; viewCount: number }>;
}

async function marksOf(env: Env, humanId: string, appIds: string[]): Promise<Marks> {
  if (appIds.length === 0) return { favorites: new Set(), views: new Map() };
  const d = db(env);
  const [favs, views] = await Promise.all([
    d.select({ appId: appFavorites.appId }).from(appFavorites).where(and(eq(appFavorites.humanId, humanId), inList(appFavorites.appId, appIds))),
    d.select().from(appViews).where(and(eq(appViews.humanId, humanId), inList(appViews.appId, appIds))),
  ]);
  return { favorites: new Set(favs.map((f) => f.appId)), views: new Map(views.map((v) => [v.appId, { lastViewedAt: v.lastViewedAt, viewCount: v.viewCount }])) };
}

function item(cfg: Config, v: Visible, marks: Marks) {
  return {
    ...viewSummary(cfg, v.app), role: v.role, custom_roles: v.customRoles,
    favorite: marks.favorites.has(v.app.id), last_viewed_at: marks.views.get(v.app.id)?.lastViewedAt ?? null,
  };
}

/** Owned (live, newest activity first) then joined (newest activity first). */
export async function myApps(env: Env, cfg: Config, humanId: string) {
  const owned = await listApps(env, humanId, { status: "live", limit: 1000 });
  const joined = await appsJoinedBy(env, humanId);
  const all: Visible[] = [
    ...owned.map((app) => ({ app, role: "owner" as const, customRoles: [] as string[] })),
    ...joined.map((j) => ({ app: j.app, role: "member" as const, customRoles: j.customRoles })),
  ];
  const marks = await marksOf(env, humanId, all.map((v) => v.app.id));
  return all.map((v) => item(cfg, v, marks));
}

/** Apps I opened that I can still see (owned and live, or joined and not deleted), most recent first. */
export async function recentApps(env: Env, cfg: Config, humanId: string, limit: number) {
  const rows = await db(env).select({ app: apps, viewedAt: appViews.lastViewedAt, roles: appMembers.customRoles }).from(appViews)
    .innerJoin(apps, eq(apps.id, appViews.appId))
    .leftJoin(appMembers, and(eq(appMembers.appId, appViews.appId), eq(appMembers.humanId, humanId)))
    .where(and(eq(appViews.humanId, humanId), ne(apps.status, "deleted"),
      or(eq(apps.ownerHumanId, humanId), sql`${appMembers.humanId} IS NOT NULL`)))
    .orderBy(desc(appViews.lastViewedAt), desc(apps.id))
    .limit(limit);
  const visible: Visible[] = rows.map((r) => r.app.ownerHumanId === humanId
    ? { app: r.app, role: "owner", customRoles: [] }
    : { app: r.app, role: "member", customRoles: r.roles ? parseRoles(r.roles) : [] });
  const marks = await marksOf(env, humanId, visible.map((v) => v.app.id));
  return visible.map((v) => item(cfg, v, marks));
}

/** My apps in the trash, most recently deleted first, with deleted_at and purge_after. */
export async function deletedApps(env: Env, cfg: Config, humanId: string) {
  const rows = await db(env).select().from(apps).where(and(eq(apps.ownerHumanId, humanId), eq(apps.status, "deleted")))
    .orderBy(desc(apps.deletedAt), desc(apps.id));
  const marks = await marksOf(env, humanId, rows.map((a) => a.id));
  return rows.map((app) => ({ ...viewSummary(cfg, app), favorite: marks.favorites.has(app.id) }));
}

export async function setFavorite(env: Env, humanId: string, appId: string, on: boolean): Promise<void> {
  const d = db(env);
  if (on) await d.insert(appFavorites).values({ humanId, appId, createdAt: nowIso() }).onConflictDoNothing();
  else await d.delete(appFavorites).where(and(eq(appFavorites.humanId, humanId), eq(appFavorites.appId, appId)));
}

export async function recordView(env: Env, humanId: string, appId: string): Promise<{ lastViewedAt: string; viewCount: number }> {
  const now = nowIso();
  const rows = await db(env).insert(appViews).values({ humanId, appId, lastViewedAt: now, viewCount: 1 })
    .onConflictDoUpdate({ target: [appViews.humanId, appViews.appId], set: { lastViewedAt: now, viewCount: sql`${appViews.viewCount} + 1` } })
    .returning();
  return { lastViewedAt: rows[0].lastViewedAt, viewCount: rows[0].viewCount };
}

// ---- template upgrade badge ----

/** The upgrade preview of src/community/upgrade.ts, plus the owner's badge and dismissal. */
export async function upgradeState(env: Env, humanId: string, app: AppRow) {
  const [preview, dismissal] = await Promise.all([
    upgradePreview(env, app),
    db(env).select().from(upgradeDismissals).where(and(eq(upgradeDismissals.humanId, humanId), eq(upgradeDismissals.appId, app.id))).limit(1),
  ]);
  const dismissed = dismissal[0]?.version ?? null;
  return { app_id: app.id, ...preview, badge: preview.available && preview.to_version !== dismissed, dismissed_version: dismissed };
}

/**
 * Dismisses the badge for one template version (the one on offer when none is named).
 * 409 `conflict` when nothing is on offer and no version is named.
 */
export async function dismissUpgrade(env: Env, humanId: string, app: AppRow, version: string | undefined) {
  const chosen = version ?? (await upgradePreview(env, app)).to_version;
  if (!chosen) throw new RelayError("conflict", "No template upgrade is on offer for this app; name the version to dismiss.", { field: "version" });
  const now = nowIso();
  await db(env).insert(upgradeDismissals).values({ humanId, appId: app.id, version: chosen, dismissedAt: now })
    .onConflictDoUpdate({ target: [upgradeDismissals.humanId, upgradeDismissals.appId], set: { version: chosen, dismissedAt: now } });
  return upgradeState(env, humanId, app);
}
