/**
 * `/v1/apps/:id/upgrade` and `/upgrade/revert` (WIRE §2.2): the owning agent's view of a
 * template upgrade — the preview, applying it, going back. The human's console and
 * `/v1/self/apps/:appId/upgrade…` call the same core (src/community/upgrade.ts).
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppContext, AppEnv } from "../types";
import { errors } from "./schemas";
import { ownedApp, requireLive } from "./app-access";
import { applyUpgrade, revertUpgrade, upgradePreview } from "../../community/upgrade";
import type { DeployActor } from "../../apps/deploy";

const breaks = z.array(z.object({ path: z.string(), message: z.string() }));

/** TemplateUpgradePreview (WIRE §2.14); `template` names the installed template (null: not installed from one). */
export const upgradePreviewFields = {
  template: z.string().nullable(), available: z.boolean(), from_version: z.string().nullable(), to_version: z.string().nullable(),
  changelog: z.string().nullable(), snapshot_id: z.string().nullable(), compat: z.enum(["clean", "forced", "incompatible"]).nullable(),
  breaks, disclosure_breaks: breaks,
  permissions: z.object({
    external_hosts: z.array(z.string()), embeds: z.array(z.string()), capabilities: z.array(z.string()), cdn: z.boolean(), offline: z.boolean(),
    webhook_rules: z.array(z.string()), is_empty: z.boolean(),
  }),
  permission_lines: z.array(z.string()), blocked: z.boolean(), blocked_reason: z.enum(["incompatible"]).nullable(), revert_available: z.boolean(),
};
export const upgradeBody = z.strictObject({
  accept_permissions: z.boolean().optional().meta({ description: "Required (true) when the new version asks for more than the app has now" }),
  expect_version: z.string().min(1).max(64).optional().meta({ description: "Refuse unless this is still the version on offer" }),
});
export const upgraded = z.object({ from_version: z.string(), to_version: z.string(), snapshot_id: z.string(), previous_version_id: z.number().int().nullable() }).meta({ title: "TemplateUpgrade" });
export const reverted = z.object({ version_id: z.number().int(), template_version: z.string().nullable() }).meta({ title: "TemplateRevert" });
export const upgradeRefusals = { ...errors(400, 401, 404, 409), 422: { description: "schema_incompatible_upgrade: details.breaks names the rows that would be stranded" } };

async function target(c: AppContext) {
  return requireLive(await ownedApp(c, c.req.param("id")!));
}

function actorOf(c: AppContext): DeployActor {
  const agent = c.get("agent");
  return { agentId: agent.agentId, ownerHumanId: agent.ownerHumanId };
}

export function appUpgradeRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "get", path: "/v1/apps/:id/upgrade", tag: "apps", auth: "agent",
    summary: "Is a newer approved version of the app's template listed, and would it apply cleanly (breaks strand rows; disclosure_breaks and permissions need acceptance)",
    responses: { 200: { description: "TemplateUpgradePreview", schema: z.object(upgradePreviewFields).meta({ title: "TemplateUpgradePreview" }) }, ...errors(401, 404) },
  }, async (c) => c.json(await upgradePreview(c.env, await target(c))));

  defineRoute(app, {
    method: "post", path: "/v1/apps/:id/upgrade", tag: "apps", auth: "agent", bodyOptional: true,
    summary: "Upgrade the app in place to its template's newest listed version through the redeploy gate; refused when rows would be stranded",
    body: upgradeBody,
    responses: { 200: { description: "Applied", schema: upgraded }, ...upgradeRefusals },
  }, async (c, { body }) => c.json(await applyUpgrade(c.env, actorOf(c), await target(c), body)));

  defineRoute(app, {
    method: "post", path: "/v1/apps/:id/upgrade/revert", tag: "apps", auth: "agent", bodyOptional: true,
    summary: "Return the app to the version it ran before its last template upgrade (as a new version); refused when newer rows would be stranded",
    body: z.strictObject({}),
    responses: { 200: { description: "Reverted", schema: reverted }, ...upgradeRefusals },
  }, async (c) => c.json(await revertUpgrade(c.env, actorOf(c), await target(c))));
}
