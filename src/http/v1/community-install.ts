/**
 * `/v1/community/templates/…/config-contract` and `…/install` (WIRE §2.10): a template is
 * named by `<handle>/<slug>` as two path segments, or by its snapshot id. Parse, call
 * src/community/install.ts, render.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppContext, AppEnv } from "../types";
import { errors } from "./schemas";
import { fetchConfigContract, installTemplate, type TemplateRef } from "../../community/install";

const configStep = z.object({
  key: z.string(), kind: z.enum(["config", "upload"]), label: z.string(), description: z.string().optional(), required: z.boolean(), secret: z.boolean(),
  choices: z.array(z.string()).optional(), default: z.string().optional(), value_hint: z.string().optional(),
});
const connectStep = z.object({
  label: z.string(), description: z.string().optional(), ingest_rule: z.string(), collection: z.string().nullable(), mode: z.enum(["append", "upsert"]).nullable(),
});
const contract = z.object({
  snapshot_id: z.string(), name: z.string(), slug: z.string().nullable(), settings_collection: z.string().nullable(),
  config_steps: z.array(configStep), connect_steps: z.array(connectStep),
}).meta({ title: "ConfigContract" });
const installBody = z.strictObject({
  config: z.record(z.string().min(1).max(64), z.string()).optional()
    .meta({ description: "Answers keyed by config step key: text for config steps, an attachment id (your own agent-scoped upload) for upload steps" }),
});
const installed = z.object({ app_id: z.string(), slug: z.string(), url: z.string() }).meta({ title: "TemplateInstall" });

const BY_NAME = "/v1/community/templates/:handle/:slug";
const BY_ID = "/v1/community/templates/:ref";

/** The caller's country as the platform saw it ("" when it did not say), for the publisher's analytics. */
function regionOf(c: AppContext): string {
  const cf = c.req.raw.cf as { country?: unknown } | undefined;
  return typeof cf?.country === "string" ? cf.country : "";
}

function refOf(c: AppContext, byName: boolean): TemplateRef {
  return byName ? { handle: c.req.param("handle")!, slug: c.req.param("slug")! } : { snapshotId: c.req.param("ref")! };
}

export function communityInstallRoutes(app: Hono<AppEnv>): void {
  for (const [prefix, byName] of [[BY_NAME, true], [BY_ID, false]] as const) {
    const named = byName ? "by <handle>/<slug> (the newest approved version)" : "by snapshot id";
    defineRoute(app, {
      method: "get", path: `${prefix}/config-contract`, tag: "community", auth: "agent",
      summary: `The config contract of an approved, listed template ${named}: its settings collection, config steps and connect steps (counts as a try)`,
      responses: { 200: { description: "The contract", schema: contract }, ...errors(401, 404) },
    }, async (c) => c.json(await fetchConfigContract(c.env, refOf(c, byName), regionOf(c))));

    defineRoute(app, {
      method: "post", path: `${prefix}/install`, tag: "community", auth: "agent", bodyOptional: true,
      summary: `Install a template ${named} as a new private app of the caller's human, with its example rows and the config answers in the settings row`,
      body: installBody,
      responses: { 201: { description: "The new app", schema: installed }, ...errors(400, 401, 403, 404, 409, 413) },
    }, async (c, { body }) => {
      const agent = c.get("agent");
      return c.json(await installTemplate(c.env, { agentId: agent.agentId, ownerHumanId: agent.ownerHumanId }, refOf(c, byName), body.config ?? {}, regionOf(c)), 201);
    });
  }
}
