/**
 * The app lifecycle (WIRE §2.2, spec A States): list, show, change visibility or
 * timezone, rotate the share link, soft delete, restore, purge and wake. Deploys live in
 * deploy.ts; advisories and disclosure in app-review.ts.
 */
import type { Hono } from "hono";
import { z } from "zod";
import { defineRoute } from "../routes";
import type { AppContext, AppEnv } from "../types";
import { config } from "../../config";
import { RelayError } from "../../errors";
import { getVersion, listApps, restoreApp, updateApp, type AppRow } from "../../db/apps";
import { appDetail, appSummary, viewDetail, viewSummary } from "../../apps/views";
import { mintShareToken } from "../../apps/share";
import { appUrl } from "../../apps/urls";
import { appStore } from "../../apps/store";
import { endAllSockets } from "../../apps/sockets";
import { purgeAfter, purgeApp } from "../../apps/trash";
import { manifestLimitsFrom, parseManifest } from "../../manifest";
import { nowIso } from "../../auth/tokens";
import { ownedApp, ownerOf, requireLive } from "./app-access";
import { errors } from "./schemas";

const statusFilter = z.enum(["active", "dormant", "archived", "suspended", "deleted", "all"]);

function encodeCursor(app: AppRow): string {
  return btoa(JSON.stringify([app.lastActivityAt, app.id])).replace(/=+$/, "");
}

function decodeCursor(cursor: string): { lastActivityAt: string; id: string } {
  try {
    const [lastActivityAt, id] = JSON.parse(atob(cursor)) as [unknown, unknown];
    if (typeof lastActivityAt === "string" && typeof id === "string") return { lastActivityAt, id };
  } catch { /* fall through */ }
  throw new RelayError("invalid_request", "This cursor was not issued by the relay.", { field: "cursor" });
}

export async function detailOf(c: AppContext, app: AppRow) {
  const version = app.currentVersion === null ? undefined : await getVersion(c.env, app.id, app.currentVersion);
  const usage = app.status === "deleted" ? { rowCount: 0, storageBytes: 0 } : await appStore(c.env, app.id).usage();
  return viewDetail(config(c.env), app, version ? JSON.parse(version.manifestJson) : null, usage);
}

/** An IANA zone name (`Europe/Paris`, `UTC`); offsets such as `+01:00` are not names. */
function validTimezone(zone: string): boolean {
  if (!/^[A-Za-z]/.test(zone)) return false;
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * Some manifest rules depend on the visibility (push notifications need a public app).
 * A visibility change the live manifest cannot stand is refused with the compiler's error,
 * so the live version never becomes one that no longer compiles for its app.
 */
async function checkManifestUnder(c: AppContext, app: AppRow, visibility: AppRow["visibility"]): Promise<void> {
  const version = app.currentVersion === null ? undefined : await getVersion(c.env, app.id, app.currentVersion);
  if (!version) return;
  const cfg = config(c.env);
  const source = JSON.parse(version.manifestJson) as unknown;
  const context = { timezone: app.timezone, appOrigin: appUrl(cfg, app.slug).replace(/\/$/, "") };
  try {
    parseManifest(source, manifestLimitsFrom(cfg), { ...context, visibility: app.visibility });
  } catch {
    return; // Already out of step with today's limits: the visibility is not what breaks it.
  }
  parseManifest(source, manifestLimitsFrom(cfg), { ...context, visibility });
}


export function appRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "get", path: "/v1/apps", tag: "apps", auth: "owner",
    summary: "My apps, newest activity first (default: every status but deleted)",
    query: z.object({
      status: statusFilter.optional(), slug: z.string().max(63).optional(), cursor: z.string().max(500).optional(),
      limit: z.coerce.number().int().min(1).max(200).optional(),
    }),
    responses: { 200: { description: "A page of apps", schema: z.object({ items: z.array(appSummary), next_cursor: z.string().nullable() }) }, ...errors(400, 401) },
  }, async (c, { query }) => {
    const owner = ownerOf(c);
    if (!owner) return c.json({ items: [], next_cursor: null });
    const limit = query.limit ?? 50;
    const rows = await listApps(c.env, owner, {
      status: query.status ?? "live", slug: query.slug, limit: limit + 1, cursor: query.cursor ? decodeCursor(query.cursor) : undefined,
    });
    const page = rows.slice(0, limit);
    const cfg = config(c.env);
    return c.json({ items: page.map((a) => viewSummary(cfg, a)), next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1]) : null });
  });

  defineRoute(app, {
    method: "get", path: "/v1/apps/:id", tag: "apps", auth: "owner",
    summary: "One app's detail record (a deleted app only with ?include_deleted=true)",
    query: z.object({ include_deleted: z.enum(["true", "false"]).optional() }),
    responses: { 200: { description: "AppDetail", schema: appDetail }, ...errors(401, 404), 410: { description: "soft_deleted" } },
  }, async (c, { query }) => {
    const target = await ownedApp(c, c.req.param("id")!);
    if (query.include_deleted !== "true") requireLive(target);
    return c.json(await detailOf(c, target));
  });

  defineRoute(app, {
    method: "patch", path: "/v1/apps/:id", tag: "apps", auth: "owner",
    summary: "Change visibility or timezone; entering link mints a share URL (shown once), leaving it clears the token",
    body: z.strictObject({ visibility: z.enum(["private", "link", "public"]).optional(), timezone: z.string().max(64).nullable().optional() })
      .refine((b) => b.visibility !== undefined || b.timezone !== undefined, "send visibility or timezone"),
    responses: {
      200: {
        description: "The changed fields",
        schema: z.object({ id: z.string(), visibility: z.enum(["private", "link", "public"]), timezone: z.string().nullable(), share_url: z.string().optional() }),
      },
      ...errors(400, 401, 403, 404),
    },
  }, async (c, { body }) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    if (typeof body.timezone === "string" && !validTimezone(body.timezone)) {
      throw new RelayError("invalid_request", `"${body.timezone}" is not an IANA time zone such as Europe/Paris.`, { field: "timezone" });
    }
    if (body.visibility !== undefined && body.visibility !== target.visibility) await checkManifestUnder(c, target, body.visibility);
    const patch: Partial<AppRow> = {};
    let shareUrl: string | undefined;
    if (body.timezone !== undefined) patch.timezone = body.timezone;
    if (body.visibility !== undefined && body.visibility !== target.visibility) {
      patch.visibility = body.visibility;
      if (body.visibility === "link") {
        const share = await mintShareToken();
        patch.shareTokenHash = share.hash;
        shareUrl = `${appUrl(config(c.env), target.slug)}#k=${share.token}`;
      } else if (target.visibility === "link") {
        patch.shareTokenHash = null;
      }
    }
    const updated = Object.keys(patch).length ? await updateApp(c.env, target.id, patch) : target;
    // Who may watch changed: every socket reconnects and is judged again.
    if (patch.visibility !== undefined) await endAllSockets(c.env, target.id, "visibility changed");
    return c.json({ id: updated.id, visibility: updated.visibility, timezone: updated.timezone, ...(shareUrl ? { share_url: shareUrl } : {}) });
  });

  defineRoute(app, {
    method: "post", path: "/v1/apps/:id/share-link/rotate", tag: "apps", auth: "owner",
    summary: "New share URL for a link app (shown once); the old URL stops working at once",
    body: z.strictObject({}), bodyOptional: true,
    responses: { 200: { description: "The new share URL", schema: z.object({ share_url: z.string() }) }, ...errors(400, 401, 403, 404, 409) },
  }, async (c) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    if (target.visibility !== "link") throw new RelayError("conflict", `Only link apps have a share URL; this app is ${target.visibility}.`, { visibility: target.visibility });
    const share = await mintShareToken();
    await updateApp(c.env, target.id, { shareTokenHash: share.hash });
    // Sockets opened with the old share pass must not outlive it.
    await endAllSockets(c.env, target.id, "share link rotated");
    return c.json({ share_url: `${appUrl(config(c.env), target.slug)}#k=${share.token}` });
  });

  defineRoute(app, {
    method: "delete", path: "/v1/apps/:id", tag: "apps", auth: "owner",
    summary: "Move the app to the trash (idempotent); its data is kept until purged",
    responses: { 200: { description: "In the trash", schema: z.object({ id: z.string(), status: z.literal("deleted"), deleted_at: z.string(), purge_after: z.string() }) }, ...errors(401, 403, 404) },
  }, async (c) => {
    const target = await ownedApp(c, c.req.param("id")!);
    const deleted = target.status === "deleted" ? target
      : await updateApp(c.env, target.id, { status: "deleted", statusBeforeDelete: target.status, deletedAt: nowIso() });
    // Its watchers stop, and calls checked before the move are turned away.
    if (target.status !== "deleted") await endAllSockets(c.env, target.id, "app trashed");
    return c.json({ id: deleted.id, status: "deleted" as const, deleted_at: deleted.deletedAt!, purge_after: purgeAfter(deleted.deletedAt!) });
  });

  defineRoute(app, {
    method: "post", path: "/v1/apps/:id/restore", tag: "apps", auth: "owner",
    summary: "Bring a deleted app back with all its data (idempotent on a live app)",
    body: z.strictObject({}), bodyOptional: true,
    responses: { 200: { description: "AppDetail", schema: appDetail }, ...errors(400, 401, 403, 404, 409) },
  }, async (c) => {
    const target = await ownedApp(c, c.req.param("id")!);
    if (target.status !== "deleted") return c.json(await detailOf(c, target));
    const cap = config(c.env).limits.MAX_APPS_PER_ACCOUNT;
    // The cap is checked in the same statement that restores, so concurrent restores or creates cannot pass it together.
    const restored = await restoreApp(c.env, target, (target.statusBeforeDelete as AppRow["status"] | null) ?? "active", cap);
    if (!restored) {
      const again = await ownedApp(c, target.id);
      if (again.status !== "deleted") return c.json(await detailOf(c, again));
      throw new RelayError("account_quota_exceeded", `This account already has ${cap} apps; delete one before restoring.`, { limit: cap, resource: "apps" });
    }
    return c.json(await detailOf(c, restored));
  });

  defineRoute(app, {
    method: "post", path: "/v1/apps/:id/purge", tag: "apps", auth: "owner",
    summary: "Destroy a deleted app now: rows, feed and records, irreversibly",
    body: z.strictObject({}), bodyOptional: true,
    responses: { 200: { description: "Purged", schema: z.object({ id: z.string(), purged: z.literal(true) }) }, ...errors(400, 401, 403, 404, 409) },
  }, async (c) => {
    const target = await ownedApp(c, c.req.param("id")!);
    if (target.status !== "deleted") throw new RelayError("conflict", "Only a deleted app can be purged; delete it first.", { status: target.status });
    await purgeApp(c.env, target.id);
    return c.json({ id: target.id, purged: true as const });
  });

  defineRoute(app, {
    method: "post", path: "/v1/apps/:id/wake", tag: "apps", auth: "owner",
    summary: "Wake a dormant app; a no-op on any other status",
    body: z.strictObject({}), bodyOptional: true,
    responses: { 200: { description: "The resulting status", schema: z.object({ id: z.string(), status: z.string() }) }, ...errors(400, 401, 403, 404) },
  }, async (c) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    const woken = target.status === "dormant" ? await updateApp(c.env, target.id, { status: "active", lastActivityAt: nowIso() }) : target;
    return c.json({ id: woken.id, status: woken.status });
  });
}
