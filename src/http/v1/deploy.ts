/**
 * Deploy routes (WIRE §2.2): create an app, redeploy it as a new version behind the
 * compatibility gate, dry-run either, and read back the authored document. The work is
 * done in src/apps/deploy.ts; this module only validates the edges and answers.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppEnv } from "../types";
import { RelayError } from "../../errors";
import { createApp, redeployApp } from "../../apps/deploy";
import { getBlob } from "../../blobs/store";
import { getVersion } from "../../db/apps";
import { ownedApp, requireLive } from "./app-access";
import { errors } from "./schemas";

const asset = z.union([
  z.strictObject({ path: z.string().max(512), content_base64: z.string(), mime: z.string().max(200).optional() }),
  z.strictObject({ path: z.string().max(512), attachment_id: z.string().max(200) }),
], { error: "must be { path, content_base64, mime? } or { path, attachment_id }" });

/**
 * Any JSON value at the edge: the manifest's own grammar judges it, so a manifest that is
 * not an object (an array, a string, null) is `manifest_invalid` with its path like every
 * other manifest mistake, not a body error. The OpenAPI document still says "object".
 */
const manifest = z.unknown().meta({
  type: "object", additionalProperties: {},
  description: "The manifest: a JSON Schema 2020-12 document whose x-service-manifest declares the app (see /docs/manifest); anything else is manifest_invalid",
});
const breaks = z.array(z.object({ path: z.string(), message: z.string() }));
const visibility = z.enum(["private", "link", "public"]);

export function deployRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "post", path: "/v1/apps", tag: "apps", auth: "agent", maxBodyBytes: (cfg) => cfg.maxDeployBodyBytes,
    summary: "Create an app and deploy its first version (dry_run: check only)",
    body: z.strictObject({
      html: z.string(), manifest, visibility: visibility.optional(), slug: z.string().max(63).optional(),
      assets: z.array(asset).optional(), dry_run: z.boolean().optional(),
      input_data: z.record(z.string(), z.array(z.unknown())).optional().meta({ description: "Starter rows { <collection>: [{ key?, data }] }, written with the deploy or not at all" }),
    }),
    responses: {
      201: {
        description: "Created",
        schema: z.object({
          app_id: z.string(), slug: z.string(), visibility, url: z.string(), version: z.number().int(), created: z.literal(true),
          share_url: z.string().optional(), warnings: z.array(z.string()).optional(),
          webhook_secret: z.string().optional().meta({ description: "Minted with the first deploy whose manifest has webhooks (WIRE §6.1)" }),
        }),
      },
      200: { description: "Dry run: the deploy would succeed", schema: z.object({ ok: z.literal(true), warnings: z.array(z.string()) }) },
      ...errors(400, 401, 403, 404, 409, 413, 426),
    },
  }, async (c, { body }) => {
    const caller = c.get("agent");
    const result = await createApp(c.env, { agentId: caller.agentId, ownerHumanId: caller.ownerHumanId }, body);
    return c.json(result.body, result.dryRun ? 200 : 201);
  });

  defineRoute(app, {
    method: "post", path: "/v1/apps/:id/versions", tag: "apps", auth: "agent", maxBodyBytes: (cfg) => cfg.maxDeployBodyBytes,
    summary: "Redeploy as a new version; whatever is not sent is carried forward; assets: [] clears them",
    body: z.strictObject({
      html: z.string().optional(), manifest: manifest.optional(), assets: z.array(asset).optional(),
      force: z.boolean().optional(), dry_run: z.boolean().optional(),
    }),
    responses: {
      200: {
        description: "The new version (or, with dry_run, what a real redeploy would do)",
        schema: z.object({
          app_id: z.string().optional(), version: z.number().int().optional(), ok: z.boolean().optional(),
          compat: z.enum(["clean", "forced", "incompatible"]), breaks: breaks.optional(), warnings: z.array(z.string()).optional(),
          webhook_secret: z.string().optional().meta({ description: "Minted with the first deploy whose manifest has webhooks (WIRE §6.1)" }),
        }),
      },
      ...errors(400, 401, 404, 409, 413, 426),
      422: { description: "manifest_incompatible_redeploy: details.breaks names each break" },
    },
  }, async (c, { body }) => {
    const caller = c.get("agent");
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    const result = await redeployApp(c.env, { agentId: caller.agentId, ownerHumanId: caller.ownerHumanId }, target, body);
    return c.json(result.body, 200);
  });

  defineRoute(app, {
    method: "get", path: "/v1/apps/:id/document", tag: "apps", auth: "owner",
    summary: "The authored HTML of the live version, without the injected prelude",
    responses: {
      200: { description: "The document", schema: z.object({ html: z.string(), version: z.number().int(), source_hash: z.string() }) },
      ...errors(401, 404),
    },
  }, async (c) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    const version = target.currentVersion === null ? undefined : await getVersion(c.env, target.id, target.currentVersion);
    const object = version ? await getBlob(c.env.BLOBS, "doc", version.documentSha256) : null;
    if (!version || !object) throw new RelayError("not_found", "This app has no deployed document.");
    return c.json({ html: await object.text(), version: version.version, source_hash: version.sourceHash });
  });
}
