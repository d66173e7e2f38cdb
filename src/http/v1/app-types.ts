/**
 * `GET /v1/apps/:id/types.d.ts`: TypeScript declarations for the live version's collections
 * and the typed page-script overlay. The text comes from the pure generator in
 * src/types-gen; this route only finds the live manifest and handles the per-version ETag.
 */
import type { Hono } from "hono";
import { defineRoute } from "../routes";
import type { AppEnv } from "../types";
import { requireLiveManifest } from "../../apps/live-manifest";
import { typesDeclaration } from "../../types-gen";
import { ownedApp, requireLive } from "./app-access";
import { errors } from "./schemas";

export function appTypesRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "get", path: "/v1/apps/:id/types.d.ts", tag: "apps", auth: "owner",
    summary: "TypeScript declarations for the live version: a type per collection's row data from its schema, Row<T>, and a typed overlay of service.collections (ETag per version)",
    responses: {
      200: { description: "The declaration file", contentType: "text/plain" },
      304: { description: "Not modified (If-None-Match)" },
      ...errors(401, 404, 409),
    },
  }, async (c) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    const manifest = await requireLiveManifest(c.env, target);
    const etag = `"types-${target.id}-v${target.currentVersion}"`;
    const headers = { ETag: etag, "Cache-Control": "private, no-cache", "X-Content-Type-Options": "nosniff" };
    if (c.req.header("if-none-match") === etag) return new Response(null, { status: 304, headers });
    const text = typesDeclaration(manifest, `${manifest.app.name} (app ${target.id}, version ${target.currentVersion})`);
    return new Response(text, { status: 200, headers: { ...headers, "Content-Type": "text/plain; charset=utf-8" } });
  });
}
