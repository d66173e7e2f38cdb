/**
 * An app's operating modes (spec A; shapes ours, CONTRACT §3): migration mode (effects
 * silent for a bounded TTL, src/apps/migration-mode.ts) and unrestricted (a private app's
 * page may reach any internet host, src/apps/unrestricted.ts). Unrestricted is HSO: only
 * the owner in their own session, never an agent key.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppContext, AppEnv } from "../types";
import { RelayError } from "../../errors";
import {
  MIGRATION_MODE_DEFAULT_SECONDS, MIGRATION_MODE_MAX_SECONDS, MIGRATION_MODE_MIN_SECONDS, migrationMode, setMigrationMode,
} from "../../apps/migration-mode";
import { setUnrestricted, unrestrictedState } from "../../apps/unrestricted";
import { ownedApp, requireLive } from "./app-access";
import { errors, isoTime } from "./schemas";

const migrationView = z.object({
  app_id: z.string(), enabled: z.boolean(), started_at: isoTime.nullable(), ends_at: isoTime.nullable(),
}).meta({ title: "MigrationMode" });

const unrestrictedView = z.object({
  app_id: z.string(), unrestricted: z.boolean(), enabled_at: isoTime.nullable(),
}).meta({ title: "Unrestricted" });

const soft = { 410: { description: "soft_deleted: the app is in the trash" } };

async function liveApp(c: AppContext) {
  return requireLive(await ownedApp(c, c.req.param("id")!));
}

export function appModeRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "post", path: "/v1/apps/:id/migration-mode", tag: "apps", auth: "owner",
    summary: `Turn migration mode on for ttl_seconds (default ${MIGRATION_MODE_DEFAULT_SECONDS}, ${MIGRATION_MODE_MIN_SECONDS} to ${MIGRATION_MODE_MAX_SECONDS}; on again: the open span now ends then) or off. While on, writes fire no notify, webhooks or agent tasks and schedules do not run; it ends by itself`,
    body: z.strictObject({
      enabled: z.boolean(),
      ttl_seconds: z.number().int().min(MIGRATION_MODE_MIN_SECONDS).max(MIGRATION_MODE_MAX_SECONDS).optional(),
      reason: z.string().trim().max(200).optional(),
    }),
    responses: { 200: { description: "The mode as it now is", schema: migrationView }, ...errors(400, 401, 404), ...soft },
  }, async (c, { body }) => {
    const target = await liveApp(c);
    return c.json(await setMigrationMode(c.env, target.id, {
      enabled: body.enabled, ttlSeconds: body.ttl_seconds ?? MIGRATION_MODE_DEFAULT_SECONDS, reason: body.reason ? body.reason : null,
    }));
  });

  defineRoute(app, {
    method: "get", path: "/v1/apps/:id/migration-mode", tag: "apps", auth: "owner",
    summary: "Whether migration mode is on, since when and until when",
    responses: { 200: { description: "The mode", schema: migrationView }, ...errors(401, 404), ...soft },
  }, async (c) => c.json(await migrationMode(c.env, (await liveApp(c)).id)));

  defineRoute(app, {
    method: "post", path: "/v1/apps/:id/unrestricted", tag: "apps", auth: "owner",
    summary: "The owner, in their own session (never an agent key), lets a private app with no live grant links reach any internet host from its page, or turns that off (idempotent). Minting a grant link or credential, or leaving private, turns it off again",
    body: z.strictObject({ enabled: z.boolean() }),
    responses: {
      200: { description: "The setting as it now is", schema: unrestrictedView },
      ...errors(400, 401, 403, 404, 409), ...soft,
    },
  }, async (c, { body }) => {
    const actor = c.get("actor");
    if (actor?.kind !== "human" || !actor.ownerHumanId) {
      throw new RelayError("forbidden", "Only the app's owner, signed in to the console, may change whether the app is unrestricted.", { required: "owner_session" });
    }
    return c.json(await setUnrestricted(c.env, await liveApp(c), body.enabled, actor.ownerHumanId));
  });

  defineRoute(app, {
    method: "get", path: "/v1/apps/:id/unrestricted", tag: "apps", auth: "owner",
    summary: "Whether the app's page may reach any internet host",
    responses: { 200: { description: "The setting", schema: unrestrictedView }, ...errors(401, 404), ...soft },
  }, async (c) => c.json(await unrestrictedState(c.env, (await liveApp(c)).id)));
}
