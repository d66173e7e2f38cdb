/**
 * `/v1/self/apps*` (spec A "Account"; shapes ours): the apps I own or joined with my
 * role and favorite flag, the ones I opened recently, my deleted ones, favorites on and
 * off, "I opened it", and the template-upgrade badge (state and dismissal). An app I
 * neither own nor belong to is `app_not_found`; my own app in the trash is
 * `soft_deleted`. Upgrade state and dismissal are the owner's.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppContext, AppEnv } from "../types";
import { config } from "../../config";
import { RelayError } from "../../errors";
import { appSummary } from "../../apps/views";
import { deletedApps, dismissUpgrade, myApps, recentApps, recordView, setFavorite, upgradeState, visibleApp } from "../../account/self-apps";
import { errors, isoTime } from "./schemas";
import { requireLive } from "./app-access";
import { upgradeBody, upgradePreviewFields, upgradeRefusals, upgraded, reverted } from "./app-upgrade";
import { applyUpgrade, revertUpgrade } from "../../community/upgrade";
import type { DeployActor } from "../../apps/deploy";
import type { AppRow } from "../../db/apps";

const myApp = appSummary.extend({
  role: z.enum(["owner", "member"]), custom_roles: z.array(z.string()), favorite: z.boolean(), last_viewed_at: isoTime.nullable(),
}).meta({ title: "MyApp" });
const deletedApp = appSummary.extend({ favorite: z.boolean() }).meta({ title: "MyDeletedApp" });
const upgradeSchema = z.object({
  app_id: z.string(), ...upgradePreviewFields, badge: z.boolean(), dismissed_version: z.string().nullable(),
}).meta({ title: "UpgradeState" });

const appErrors = { ...errors(401, 403, 404), 410: { description: "soft_deleted: my app is in the trash" } };

/** The owner acting through the console: the new version is recorded as made by the app's creating agent. */
function ownerActor(app: AppRow): DeployActor {
  return { agentId: app.createdByAgentId, ownerHumanId: app.ownerHumanId };
}

function humanId(c: AppContext): string {
  return c.get("human").humanId;
}

async function ownedVisible(c: AppContext) {
  const v = await visibleApp(c.env, humanId(c), c.req.param("appId")!);
  if (v.role !== "owner") throw new RelayError("forbidden", "Only the app's owner sees and dismisses its template upgrades.", { role: v.role });
  return v.app;
}

export function selfAppRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "get", path: "/v1/self/apps", tag: "account", auth: "human",
    summary: "Apps I own (live, newest activity first) then apps I joined as a member (not deleted), each with my role, custom roles, favorite flag and when I last opened it",
    responses: { 200: { description: "All of them in one page (next_cursor is always null)", schema: z.object({ items: z.array(myApp), next_cursor: z.null() }) }, ...errors(401) },
  }, async (c) => c.json({ items: await myApps(c.env, config(c.env), humanId(c)), next_cursor: null }));

  defineRoute(app, {
    method: "get", path: "/v1/self/apps/recent", tag: "account", auth: "human",
    summary: "Apps I opened (POST …/view) that I can still see, most recently opened first",
    query: z.object({ limit: z.coerce.number().int().min(1).max(100).optional() }),
    responses: { 200: { description: "Recently opened apps", schema: z.object({ items: z.array(myApp), next_cursor: z.null() }) }, ...errors(400, 401) },
  }, async (c, { query }) => c.json({ items: await recentApps(c.env, config(c.env), humanId(c), query.limit ?? 20), next_cursor: null }));

  defineRoute(app, {
    method: "get", path: "/v1/self/apps/deleted", tag: "account", auth: "human",
    summary: "My apps in the trash, most recently deleted first, with deleted_at and purge_after",
    responses: { 200: { description: "Deleted apps", schema: z.object({ items: z.array(deletedApp), next_cursor: z.null() }) }, ...errors(401) },
  }, async (c) => c.json({ items: await deletedApps(c.env, config(c.env), humanId(c)), next_cursor: null }));

  for (const [method, on] of [["put", true], ["delete", false]] as const) {
    defineRoute(app, {
      method, path: "/v1/self/apps/:appId/favorite", tag: "account", auth: "human",
      summary: on ? "Mark an app I own or joined as a favorite (idempotent)" : "Unmark a favorite (idempotent)",
      responses: { 200: { description: "The flag now", schema: z.object({ app_id: z.string(), favorite: z.literal(on) }) }, ...appErrors },
    }, async (c) => {
      const v = await visibleApp(c.env, humanId(c), c.req.param("appId")!);
      await setFavorite(c.env, humanId(c), v.app.id, on);
      return c.json({ app_id: v.app.id, favorite: on });
    });
  }

  defineRoute(app, {
    method: "post", path: "/v1/self/apps/:appId/view", tag: "account", auth: "human",
    summary: "Record that I opened the app (feeds /v1/self/apps/recent)",
    body: z.strictObject({}), bodyOptional: true,
    responses: {
      200: { description: "My view record", schema: z.object({ app_id: z.string(), last_viewed_at: isoTime, view_count: z.number().int() }) },
      ...errors(400), ...appErrors,
    },
  }, async (c) => {
    const v = await visibleApp(c.env, humanId(c), c.req.param("appId")!);
    const seen = await recordView(c.env, humanId(c), v.app.id);
    return c.json({ app_id: v.app.id, last_viewed_at: seen.lastViewedAt, view_count: seen.viewCount });
  });

  defineRoute(app, {
    method: "get", path: "/v1/self/apps/:appId/upgrade", tag: "account", auth: "human",
    summary: "Template upgrade availability for my app, with the badge flag and the version I dismissed (an app not installed from a template has none)",
    responses: { 200: { description: "Upgrade state", schema: upgradeSchema }, ...appErrors },
  }, async (c) => c.json(await upgradeState(c.env, humanId(c), await ownedVisible(c))));

  defineRoute(app, {
    method: "post", path: "/v1/self/apps/:appId/upgrade/dismiss", tag: "account", auth: "human",
    summary: "Hide the upgrade badge for one template version (default: the one on offer; conflict when none is on offer and none is named)",
    body: z.strictObject({ version: z.string().trim().min(1).max(64).regex(/^[0-9A-Za-z.+-]+$/, "must be a version such as 1.2.0").optional() }), bodyOptional: true,
    responses: { 200: { description: "Upgrade state", schema: upgradeSchema }, ...errors(400, 409), ...appErrors },
  }, async (c, { body }) => c.json(await dismissUpgrade(c.env, humanId(c), await ownedVisible(c), body.version)));

  defineRoute(app, {
    method: "post", path: "/v1/self/apps/:appId/upgrade", tag: "account", auth: "human", bodyOptional: true,
    summary: "Upgrade my app in place to its template's newest listed version (not installed from a template, nothing newer, a moved expect_version or unaccepted permissions: 409; stranded rows: 422)",
    body: upgradeBody,
    responses: { 200: { description: "Applied", schema: upgraded }, ...upgradeRefusals, ...appErrors },
  }, async (c, { body }) => {
    const target = await ownedVisible(c);
    return c.json(await applyUpgrade(c.env, ownerActor(target), requireLive(target), body));
  });

  defineRoute(app, {
    method: "post", path: "/v1/self/apps/:appId/upgrade/revert", tag: "account", auth: "human", bodyOptional: true,
    summary: "Return my app to the version before its last template upgrade (nothing to revert: 409; stranded rows: 422)",
    body: z.strictObject({}),
    responses: { 200: { description: "Reverted", schema: reverted }, ...upgradeRefusals, ...appErrors },
  }, async (c) => {
    const target = await ownedVisible(c);
    return c.json(await revertUpgrade(c.env, ownerActor(target), requireLive(target)));
  });
}
