/**
 * The app registry in D1: who owns which app, its slug, visibility, lifecycle status and
 * live version, and the immutable version records. Every lookup is scoped to an owner, so
 * another owner's app is indistinguishable from a missing one (`app_not_found`).
 */
import { and, desc, eq, gte, lt, notLike, or, sql, count, type SQL, type SQLWrapper } from "drizzle-orm";
import { db, preparedPerBinding } from "./client";
import { apps, appVersions } from "./apps-schema";
import { nowIso } from "../auth/tokens";

type Env = { DB: D1Database };
export type AppRow = typeof apps.$inferSelect;
export type AppVersionRow = typeof appVersions.$inferSelect;
export type AppStatus = AppRow["status"];
export type Visibility = AppRow["visibility"];

export interface AssetEntry {
  path: string;
  sha256: string;
  size: number;
  mime: string;
  /** Set when the bytes came from an attachment; they were copied, so deleting it later changes nothing here. */
  attachment_id?: string;
}

/** App ids look like `a` + 21 lowercase alphanumerics: the CLI's "looks like an id" rule. */
export function newAppId(): string {
  const time = Date.now().toString(36).padStart(9, "0");
  const rand = [...crypto.getRandomValues(new Uint8Array(12))].map((b) => (b % 36).toString(36)).join("");
  return `a${time}${rand}`;
}

/**
 * "The app `idOrSlug` among this owner's apps", as a condition. The auth lookups join on it
 * so that resolving the caller and finding the app they name is one D1 read (DESIGN §7).
 */
export function ownedAppCondition(ownerHumanId: SQLWrapper | string, idOrSlug: SQLWrapper | string): SQL {
  return and(eq(apps.ownerHumanId, ownerHumanId), or(eq(apps.id, idOrSlug), eq(apps.slug, idOrSlug)))!;
}

export async function findAppForOwner(env: Env, ownerHumanId: string, idOrSlug: string): Promise<AppRow | undefined> {
  return (await db(env).select().from(apps).where(ownedAppCondition(ownerHumanId, idOrSlug)).limit(1))[0];
}

/** Whether `ownerId` (a person or a placeholder) owns the app with exactly this id, whatever its status; never matches by slug. */
export async function ownsApp(env: Env, ownerId: string, appId: string): Promise<boolean> {
  const row = await db(env).select({ id: apps.id }).from(apps).where(and(eq(apps.id, appId), eq(apps.ownerHumanId, ownerId))).limit(1);
  return row.length === 1;
}

/** The ids of every app the human (or a placeholder, see importOwner) owns, whatever its status. */
export async function appIdsOfOwner(env: Env, ownerHumanId: string): Promise<string[]> {
  return (await db(env).select({ id: apps.id }).from(apps).where(eq(apps.ownerHumanId, ownerHumanId))).map((r) => r.id);
}

/**
 * Placeholder owners: while an app is made in more than one step, a placeholder owns it,
 * not a person. An archive import filling a new app (src/apps/archive) owns it as
 * `import:<import id>`; a create seeding its starter rows (src/apps/seeding.ts) owns it as
 * `seeding:<human id>`. No human id has either form. Every owner-scoped lookup, list and
 * count misses such an app, so a half-made app is never shown nor counted; when it is
 * whole it is handed to its person in one statement (handOverApp).
 */
const IMPORT_OWNER_PREFIX = "import:";
const SEEDING_OWNER_PREFIX = "seeding:";
/** The first string after every `seeding:…` (';' follows ':'). */
const SEEDING_OWNERS_END = "seeding;";
const PLACEHOLDER_OWNER_PREFIXES = [IMPORT_OWNER_PREFIX, SEEDING_OWNER_PREFIX];

export function importOwner(importId: string): string {
  return `${IMPORT_OWNER_PREFIX}${importId}`;
}

/** The owner of an app a create is seeding for this person, until it is handed over. */
export function seedingOwner(humanId: string): string {
  return `${SEEDING_OWNER_PREFIX}${humanId}`;
}

/** Whether `ownerId` is a placeholder (no person: see above), not a human id. */
function isPlaceholderOwner(ownerId: string): boolean {
  return PLACEHOLDER_OWNER_PREFIXES.some((prefix) => ownerId.startsWith(prefix));
}

/** The condition that leaves out apps a placeholder still owns, for lookups not scoped by owner. */
export const notPlaceholderOwned = and(...PLACEHOLDER_OWNER_PREFIXES.map((prefix) => notLike(apps.ownerHumanId, `${prefix}%`)))!;

/** The slug lookup (every page view and app-origin call makes one), prepared once. */
const bySlugOf = preparedPerBinding((d) => d.select().from(apps)
  .where(and(eq(apps.slug, sql.placeholder("slug")), notPlaceholderOwned)).limit(1).prepare());

/** The app at this slug, unless a placeholder still owns it (its pages are not served until it is whole). */
export async function findAppBySlug(env: Env, slug: string): Promise<AppRow | undefined> {
  return (await bySlugOf(env).all({ slug }))[0];
}

/**
 * The ids of apps a create began seeding before `createdBefore` and never handed over.
 * A range over the owner column, so the owner index serves it.
 */
export async function seedingAppsCreatedBefore(env: Env, createdBefore: string, limit: number): Promise<string[]> {
  return (await db(env).select({ id: apps.id }).from(apps)
    .where(and(gte(apps.ownerHumanId, SEEDING_OWNER_PREFIX), lt(apps.ownerHumanId, SEEDING_OWNERS_END), lt(apps.createdAt, createdBefore)))
    .limit(limit)).map((r) => r.id);
}

/** Whether a create of this person, seeding its starter rows, holds this slug. */
export async function slugHeldBySeeding(env: Env, slug: string, humanId: string): Promise<boolean> {
  return (await db(env).select({ id: apps.id }).from(apps)
    .where(and(eq(apps.slug, slug), eq(apps.ownerHumanId, seedingOwner(humanId)))).limit(1)).length > 0;
}

export async function slugExists(env: Env, slug: string): Promise<boolean> {
  return (await db(env).select({ id: apps.id }).from(apps).where(eq(apps.slug, slug)).limit(1)).length > 0;
}

export async function countLiveApps(env: Env, ownerHumanId: string): Promise<number> {
  const rows = await db(env).select({ n: count() }).from(apps)
    .where(and(eq(apps.ownerHumanId, ownerHumanId), sql`${apps.status} != 'deleted'`));
  return rows[0]?.n ?? 0;
}

export async function getVersion(env: Env, appId: string, version: number): Promise<AppVersionRow | undefined> {
  return (await db(env).select().from(appVersions)
    .where(and(eq(appVersions.appId, appId), eq(appVersions.version, version))).limit(1))[0];
}

/** The live (not trashed) apps of the owner bound at ?3, counted in the statement that checks the app cap. */
export const LIVE_APPS_OF = "(SELECT count(*) FROM apps WHERE owner_human_id = ?3 AND status != 'deleted')";
/**
 * The person an app goes to still has an account (bind: their id, or null for a
 * placeholder owner, checked when it hands the app over). Creates, hand-overs, restores
 * and transfers carry it: an account deleted while one of them was under way must not end
 * up owning a live app its deletion never trashed. The deletion's batch and the statement
 * are serialised, so either the deletion sees the app or the statement sees no account.
 */
export const personExists = (bind: string) => `(${bind} IS NULL OR EXISTS (SELECT 1 FROM humans WHERE id = ${bind}))`;

function versionValues(v: AppVersionRow): unknown[] {
  return [v.appId, v.version, v.manifestJson, v.documentSha256, v.documentBytes, v.assetsJson, v.sourceHash, v.compat, v.breaksJson, v.createdByAgentId, v.createdAt];
}

const VERSION_COLUMNS = "app_id, version, manifest_json, document_sha256, document_bytes, assets_json, source_hash, compat, breaks_json, created_by_agent_id, created_at";

/**
 * The condition under which a deploy's statements apply, as SQL with its binds (`?`
 * placeholders only). The state a version brings with it (its inbound hooks, its webhook
 * secret, its discarded tasks) is written by statements that carry it, in the same D1
 * batch as the version itself, so it lands with the version or not at all.
 */
export interface DeployGuard {
  condition: string;
  binds: unknown[];
}

/** The app was created by this batch (its insert, under the cap, came first). */
export function appCreated(appId: string): DeployGuard {
  return { condition: "EXISTS (SELECT 1 FROM apps WHERE id = ?)", binds: [appId] };
}

/** The apps row still at the version a redeploy started from (binds: app id, version). */
const LIVE_AT = "id = ? AND current_version = ? AND status != 'deleted'";

/** The app is still live at `expectedVersion`: a redeploy from it has not been overtaken. */
export function stillLiveAt(appId: string, expectedVersion: number): DeployGuard {
  return { condition: `EXISTS (SELECT 1 FROM apps WHERE ${LIVE_AT})`, binds: [appId, expectedVersion] };
}

/** A version row inserted only while `guard` holds (binds: the version's values, then the guard's). */
function guardedVersionInsert(env: Env, version: AppVersionRow, guard: DeployGuard): D1PreparedStatement {
  const values = VERSION_COLUMNS.split(",").map(() => "?").join(", ");
  return env.DB.prepare(`INSERT INTO app_versions (${VERSION_COLUMNS}) SELECT ${values} WHERE ${guard.condition}`)
    .bind(...versionValues(version), ...guard.binds);
}

/**
 * Creates the app and its first version in one D1 batch (both or neither), only while
 * the owner has fewer than `maxLiveApps` live apps: the count and the insert are one
 * statement, so concurrent creates cannot pass the cap together; nor once the owner's
 * account is gone (personExists). `derived` (built with `appCreated(app.id)`) rides in the
 * same batch. Null when at the cap or the account is gone, else the results of `derived`
 * in order; a taken slug throws the unique index's error.
 */
export async function insertAppWithVersion(env: Env, app: AppRow, version: AppVersionRow, maxLiveApps: number, derived: D1PreparedStatement[] = []): Promise<D1Result[] | null> {
  const insertApp = env.DB.prepare(
    "INSERT INTO apps (id, slug, owner_human_id, created_by_agent_id, visibility, status, current_version, timezone, share_token_hash, created_at, last_activity_at, deleted_at, status_before_delete) " +
    `SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13 WHERE ${LIVE_APPS_OF} < ?14 AND ${personExists("?15")}`,
  ).bind(
    app.id, app.slug, app.ownerHumanId, app.createdByAgentId, app.visibility, app.status, app.currentVersion, app.timezone,
    app.shareTokenHash, app.createdAt, app.lastActivityAt, app.deletedAt, app.statusBeforeDelete, maxLiveApps,
    isPlaceholderOwner(app.ownerHumanId) ? null : app.ownerHumanId,
  );
  const insertVersion = guardedVersionInsert(env, version, appCreated(app.id));
  const [inserted, , ...results] = await env.DB.batch([insertApp, insertVersion, ...derived]);
  return inserted.meta.changes === 1 ? results : null;
}

/**
 * Takes a deleted app out of the trash, only while its owner has fewer than
 * `maxLiveApps` live apps (checked in the same statement). Undefined when at the cap.
 */
export async function restoreApp(env: Env, app: AppRow, status: AppStatus, maxLiveApps: number): Promise<AppRow | undefined> {
  const row = await env.DB.prepare(
    "UPDATE apps SET status = ?2, status_before_delete = NULL, deleted_at = NULL " +
    `WHERE id = ?1 AND status = 'deleted' AND ${LIVE_APPS_OF} < ?4 AND ${personExists("?3")}`,
  ).bind(app.id, status, app.ownerHumanId, maxLiveApps).run();
  if (row.meta.changes !== 1) return undefined;
  return (await db(env).select().from(apps).where(eq(apps.id, app.id)).limit(1))[0];
}

/**
 * Gives an app, whole now, from the placeholder that made it (an import, a seeding
 * create) to its person, only while that person has fewer than `maxLiveApps` live apps
 * (counted in the same statement, so the cap holds against concurrent creates and
 * imports). It becomes visible at that instant, first in its person's list. False when at
 * the cap, when the person's account is gone, or when the placeholder no longer owns the
 * app (a sweep undid it).
 */
export async function handOverApp(env: Env, appId: string, fromPlaceholder: string, toHumanId: string, maxLiveApps: number): Promise<boolean> {
  const moved = await env.DB.prepare(
    `UPDATE apps SET owner_human_id = ?3, last_activity_at = ?4 WHERE id = ?1 AND owner_human_id = ?2 AND ${LIVE_APPS_OF} < ?5 AND ${personExists("?3")}`,
  ).bind(appId, fromPlaceholder, toHumanId, nowIso(), maxLiveApps).run();
  return moved.meta.changes === 1;
}

/**
 * Adds a version and moves the app to it, only if the app is still live at
 * `expectedVersion` (a concurrent redeploy or delete loses with null instead of
 * clobbering). One D1 batch, so every statement lands or none: readers never see a
 * current_version without its record, and a failed insert leaves the app where it was.
 * `derived` (built with `stillLiveAt(appId, expectedVersion)`) rides in the batch before
 * the switch, so the version goes live with it; the answer is its results in order.
 */
export async function insertVersionAndAdvance(env: Env, version: AppVersionRow, expectedVersion: number, derived: D1PreparedStatement[] = []): Promise<D1Result[] | null> {
  const insert = guardedVersionInsert(env, version, stillLiveAt(version.appId, expectedVersion));
  const advance = env.DB.prepare(`UPDATE apps SET current_version = ?, last_activity_at = ? WHERE ${LIVE_AT}`)
    .bind(version.version, version.createdAt, version.appId, expectedVersion);
  const results = await env.DB.batch([insert, ...derived, advance]);
  const [inserted, moved] = [results[0], results[results.length - 1]];
  return inserted.meta.changes === 1 && moved.meta.changes === 1 ? results.slice(1, -1) : null;
}

export interface ListAppsQuery {
  /** `live`: every status but deleted. */
  status: AppStatus | "all" | "live";
  slug?: string;
  limit: number;
  cursor?: { lastActivityAt: string; id: string };
}

/** Newest activity first; the cursor is the last item's (last_activity_at, id). */
export async function listApps(env: Env, ownerHumanId: string, q: ListAppsQuery): Promise<AppRow[]> {
  const conditions = [eq(apps.ownerHumanId, ownerHumanId)];
  if (q.status === "live") conditions.push(sql`${apps.status} != 'deleted'`);
  else if (q.status !== "all") conditions.push(eq(apps.status, q.status));
  if (q.slug) conditions.push(eq(apps.slug, q.slug));
  if (q.cursor) {
    conditions.push(or(lt(apps.lastActivityAt, q.cursor.lastActivityAt),
      and(eq(apps.lastActivityAt, q.cursor.lastActivityAt), lt(apps.id, q.cursor.id)))!);
  }
  return db(env).select().from(apps).where(and(...conditions))
    .orderBy(desc(apps.lastActivityAt), desc(apps.id)).limit(q.limit);
}

export async function updateApp(env: Env, appId: string, patch: Partial<AppRow>): Promise<AppRow> {
  const rows = await db(env).update(apps).set(patch).where(eq(apps.id, appId)).returning();
  return rows[0];
}

export function touchActivity(): Pick<AppRow, "lastActivityAt"> {
  return { lastActivityAt: nowIso() };
}
