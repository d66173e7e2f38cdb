/**
 * The app lifecycle (WIRE §2.2, spec A States): list, show, change visibility or
 * timezone, rotate the share link, soft delete, restore, purge and wake. Deploys live in
 * deploy.ts; advisories and disclosure in app-review.ts.
 */
import type { Hono } from "hono";
import { webhookSecretOf } from "../../effects/webhooks/secret";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppContext, AppEnv } from "../types";
import { config } from "../../config";
import { getVersion, listApps, updateApp, type AppRow } from "../../db/apps";
import { appDetail, appSummary, viewDetail, viewSummary } from "../../apps/views";
import { appStore } from "../../apps/store";
import { changeAppSettings, rotateShareLink, VISIBILITIES } from "../../apps/settings";
import { purgeAfter, purgeTrashedApp, restoreTrashedApp, trashApp } from "../../apps/trash";
import { nowIso } from "../../auth/tokens";
import { ownedApp, ownerOf, requireLive } from "./app-access";
import { errors, unrestrictedRevocation } from "./schemas";
import { appOperationRoutes } from "./app-operations";
import { revocationNotice } from "../../apps/unrestricted";
import { decodeOpaqueCursor, encodeOpaqueCursor } from "../opaque-cursor";

const statusFilter = z.enum(["active", "dormant", "archived", "suspended", "deleted", "all"]);

function encodeCursor(app: AppRow): string {
  return encodeOpaqueCursor([app.lastActivityAt, app.id]);
}

function decodeCursor(cursor: string): { lastActivityAt: string; id: string } {
  const [lastActivityAt, id] = decodeOpaqueCursor(cursor, ["string", "string"]) as [string, string];
  return { lastActivityAt, id };
}

export async function detailOf(c: AppContext, app: AppRow) {
  const version = app.currentVersion === null ? undefined : await getVersion(c.env, app.id, app.currentVersion);
  const [usage, webhookSecret] = await Promise.all([
    app.status === "deleted" ? { rowCount: 0, storageBytes: 0 } : appStore(c.env, app.id).usage(),
    webhookSecretOf(c.env, app.id),
  ]);
  return viewDetail(config(c.env), app, version ? JSON.parse(version.manifestJson) : null, usage, webhookSecret);
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
    body: z.strictObject({ visibility: z.enum(VISIBILITIES).optional(), timezone: z.string().max(64).nullable().optional() })
      .refine((b) => b.visibility !== undefined || b.timezone !== undefined, "must name visibility or timezone"),
    responses: {
      200: {
        description: "The changed fields",
        schema: z.object({ id: z.string(), visibility: z.enum(VISIBILITIES), timezone: z.string().nullable(), share_url: z.string().optional(), ...unrestrictedRevocation }),
      },
      ...errors(400, 401, 403, 404),
    },
  }, async (c, { body }) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    const { app: updated, shareUrl, unrestrictedRevoked } = await changeAppSettings(c.env, target, body);
    return c.json({ id: updated.id, visibility: updated.visibility, timezone: updated.timezone, ...(shareUrl ? { share_url: shareUrl } : {}), ...revocationNotice(unrestrictedRevoked) });
  });

  defineRoute(app, {
    method: "post", path: "/v1/apps/:id/share-link/rotate", tag: "apps", auth: "owner",
    summary: "New share URL for a link app (shown once); the old URL stops working at once",
    body: z.strictObject({}), bodyOptional: true,
    responses: { 200: { description: "The new share URL", schema: z.object({ share_url: z.string() }) }, ...errors(400, 401, 403, 404, 409) },
  }, async (c) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    return c.json({ share_url: await rotateShareLink(c.env, target) });
  });

  defineRoute(app, {
    method: "delete", path: "/v1/apps/:id", tag: "apps", auth: "owner",
    summary: "Move the app to the trash (idempotent); its data is kept until purged",
    responses: { 200: { description: "In the trash", schema: z.object({ id: z.string(), status: z.literal("deleted"), deleted_at: z.string(), purge_after: z.string() }) }, ...errors(401, 403, 404) },
  }, async (c) => {
    const deleted = await trashApp(c.env, await ownedApp(c, c.req.param("id")!));
    return c.json({ id: deleted.id, status: "deleted" as const, deleted_at: deleted.deletedAt!, purge_after: purgeAfter(deleted.deletedAt!) });
  });

  defineRoute(app, {
    method: "post", path: "/v1/apps/:id/restore", tag: "apps", auth: "owner",
    summary: "Bring a deleted app back with all its data (idempotent on a live app)",
    body: z.strictObject({}), bodyOptional: true,
    responses: { 200: { description: "AppDetail", schema: appDetail }, ...errors(400, 401, 403, 404, 409) },
  }, async (c) => {
    return c.json(await detailOf(c, await restoreTrashedApp(c.env, await ownedApp(c, c.req.param("id")!))));
  });

  defineRoute(app, {
    method: "post", path: "/v1/apps/:id/purge", tag: "apps", auth: "owner",
    summary: "Destroy a deleted app now: rows, feed and records, irreversibly",
    body: z.strictObject({}), bodyOptional: true,
    responses: { 200: { description: "Purged", schema: z.object({ id: z.string(), purged: z.literal(true) }) }, ...errors(400, 401, 403, 404, 409) },
  }, async (c) => {
    const target = await ownedApp(c, c.req.param("id")!);
    await purgeTrashedApp(c.env, target);
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
  appOperationRoutes(app); // migration mode, unrestricted, analytics, usage, screenshot, domains
}
