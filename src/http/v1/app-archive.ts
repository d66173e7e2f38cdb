/**
 * App export and import over /v1 (docs/export-import.md): `GET /v1/apps/:id/export`
 * streams one tar archive of the app, `POST /v1/apps/import` reads one as a streamed body
 * and creates a new app from it. The work is in src/apps/archive; these routes only find
 * the app, hand over the streams and answer.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppEnv } from "../types";
import { exportApp } from "../../apps/archive/export";
import { importApp } from "../../apps/archive/import";
import { invalidArchive } from "../../apps/archive/tar";
import { storeCall } from "../../apps/store-call";
import { ownedApp, requireLive } from "./app-access";
import { errors } from "./schemas";

const TAR = "application/x-tar";

export function appArchiveRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "get", path: "/v1/apps/:id/export", tag: "apps", auth: "agent",
    summary: "One tar archive of the app, streamed: export.json, manifest, document, assets, live rows with keys, versions and stamps, the attachments rows reference, SHA256SUMS last; no members, credentials, grants, connections or secrets",
    responses: {
      200: { description: "The archive (application/x-tar)", contentType: TAR },
      ...errors(401, 404, 409, 410),
    },
  }, async (c) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    const stream = await exportApp(c.env, target, storeCall(c, target));
    return new Response(stream, {
      status: 200,
      headers: {
        "Content-Type": TAR, "Content-Disposition": `attachment; filename="${target.slug}-export.tar"`,
        "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
      },
    });
  });

  defineRoute(app, {
    method: "post", path: "/v1/apps/import", tag: "apps", auth: "agent",
    summary: "A new app from an export archive sent as the raw body (application/x-tar, streamed); every entry's size and sha256 are checked before anything is created, and a failure midway leaves no app",
    responses: {
      201: {
        description: "Created: the deploy's answer plus what was imported",
        schema: z.object({
          app_id: z.string(), slug: z.string(), visibility: z.enum(["private", "link", "public"]), url: z.string(), version: z.number().int(), created: z.literal(true),
          share_url: z.string().optional(), webhook_secret: z.string().optional(), warnings: z.array(z.string()).optional(),
          imported: z.object({ from_app_id: z.string(), rows: z.number().int(), attachments: z.number().int(), assets: z.number().int() }),
        }),
      },
      ...errors(400, 401, 403, 409, 413, 422),
    },
  }, async (c) => {
    const body = c.req.raw.body;
    if (!body) throw invalidArchive("the body is empty");
    const declared = Number(c.req.header("content-length") ?? "NaN");
    const caller = c.get("agent");
    const result = await importApp(c.env, { agentId: caller.agentId, ownerHumanId: caller.ownerHumanId }, body, Number.isFinite(declared) ? declared : null);
    return c.json(result.body, 201);
  });
}
