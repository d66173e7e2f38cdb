/**
 * What an app's manifest exposes, for its owner: advisories across every app (worst
 * first; the CLI's `apps audit`) and one app's disclosure, rendered for a human. Both are
 * read-only judgements of the live manifest.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppContext, AppEnv } from "../types";
import { config } from "../../config";
import { RelayError } from "../../errors";
import { getVersion, listApps, type AppRow } from "../../db/apps";
import { compileLive } from "../../apps/deploy";
import { advisoriesFor, highestSeverity, type Advisory } from "../../apps/advisories";
import { disclosure, type CompiledManifest } from "../../manifest";
import { ownedApp, ownerOf, requireLive } from "./app-access";
import { errors } from "./schemas";

const severity = z.enum(["high", "medium", "low"]);
const ADVISORY_SCAN_LIMIT = 500;

async function liveManifest(c: AppContext, app: AppRow): Promise<CompiledManifest | null> {
  const version = app.currentVersion === null ? undefined : await getVersion(c.env, app.id, app.currentVersion);
  return version ? compileLive({ app, version }, config(c.env)) : null;
}

export function appReviewRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "get", path: "/v1/apps/advisories", tag: "apps", auth: "owner",
    summary: "Review my apps for collections whose permissions expose them, worst first",
    query: z.object({ severity: severity.optional() }),
    responses: {
      200: {
        description: "Advisories",
        schema: z.object({
          apps_scanned: z.number().int(), apps_affected: z.number().int(),
          counts: z.object({ high: z.number().int(), medium: z.number().int(), low: z.number().int() }), truncated: z.boolean(),
          items: z.array(z.object({
            app_id: z.string(), slug: z.string(), visibility: z.string(), status: z.string(), current_version: z.number().int().nullable(),
            highest_severity: severity, advisories: z.array(z.object({ code: z.string(), collection: z.string(), severity, message: z.string() })),
          })),
        }),
      },
      ...errors(400, 401),
    },
  }, async (c, { query }) => {
    const owner = ownerOf(c);
    const rows = owner ? await listApps(c.env, owner, { status: "live", limit: ADVISORY_SCAN_LIMIT + 1 }) : [];
    const scanned = rows.slice(0, ADVISORY_SCAN_LIMIT);
    const counts = { high: 0, medium: 0, low: 0 };
    const items = [];
    for (const target of scanned) {
      const manifest = await liveManifest(c, target);
      const all: Advisory[] = manifest ? advisoriesFor(manifest, target.visibility) : [];
      for (const a of all) counts[a.severity]++;
      const shown = query.severity ? all.filter((a) => a.severity === query.severity) : all;
      if (shown.length === 0) continue;
      items.push({
        app_id: target.id, slug: target.slug, visibility: target.visibility, status: target.status,
        current_version: target.currentVersion, highest_severity: highestSeverity(shown)!, advisories: shown,
      });
    }
    const order = { high: 0, medium: 1, low: 2 };
    items.sort((a, b) => order[a.highest_severity] - order[b.highest_severity]);
    return c.json({ apps_scanned: scanned.length, apps_affected: items.length, counts, truncated: rows.length > ADVISORY_SCAN_LIMIT, items });
  });

  defineRoute(app, {
    method: "get", path: "/v1/apps/:id/disclosure", tag: "apps", auth: "owner",
    summary: "What the live manifest declares (who reads and writes what, outside hosts, capabilities), for a human",
    responses: { 200: { description: "Disclosure" }, ...errors(401, 404) },
  }, async (c) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    const manifest = await liveManifest(c, target);
    if (!manifest) throw new RelayError("not_found", "This app has no live manifest.");
    return c.json({ app_id: target.id, version: target.currentVersion, ...disclosure(manifest) });
  });
}
