/**
 * The change feed over long-poll (WIRE §2.4): entries after `since` (0, the start, when
 * omitted), held open up to `wait` seconds when caught up, filtered to what the caller may
 * read (an update that took a row out of the caller's sight comes as a delete with data
 * null) and, with `collection` (one name or several separated by commas), to those
 * collections; the cursor still moves past the entries the filter leaves out. A dormant app
 * answers 409 "app is dormant"; an archived or suspended one 410 `gone`; a cursor below
 * the retention floor or past the newest entry 410 `resync_required` (details carry
 * `head`, where to resume after re-listing) — as the app feed socket answers `resync`.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppEnv } from "../types";
import { config } from "../../config";
import { appStore } from "../../apps/store";
import { requireFeedReadable } from "../../apps/feed-browse";
import { storeCall, unwrap } from "../../apps/store-call";
import { ownedApp, requireLive } from "./app-access";
import { errors } from "./schemas";

export function feedRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "get", path: "/v1/apps/:id/feed", tag: "feed", auth: "owner",
    summary: "Change feed entries after since (default 0 = from the start), long-polling up to wait seconds; collection=a,b keeps those collections' entries only",
    query: z.object({
      since: z.coerce.number().int().min(0).optional(), limit: z.coerce.number().int().min(1).optional(),
      wait: z.coerce.number().min(0).max(30).optional(),
      collection: z.string().max(2000).regex(/^[^,]+(,[^,]+)*$/, "must be one collection name, or several separated by commas").optional(),
    }),
    responses: {
      200: { description: "Entries", schema: z.object({ entries: z.array(z.record(z.string(), z.unknown())), cursor: z.number().int(), truncated: z.boolean() }) },
      ...errors(400, 401, 404, 409),
      410: { description: "resync_required (cursor below the retention floor or past the newest entry; details.head is where to resume), or gone for an archived or suspended app" },
    },
  }, async (c, { query }) => {
    const target = requireFeedReadable(requireLive(await ownedApp(c, c.req.param("id")!)));
    const limit = Math.min(query.limit ?? 100, config(c.env).limits.FEED_PAGE_MAX);
    const collections = query.collection === undefined ? undefined : [...new Set(query.collection.split(","))];
    return c.json(unwrap(await appStore(c.env, target.id).feed(storeCall(c, target), query.since ?? 0, limit, (query.wait ?? 0) * 1000, collections)));
  });
}
