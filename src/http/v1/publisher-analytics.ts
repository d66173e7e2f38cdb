/**
 * `GET /v1/publisher/analytics` (spec A, AKO): the publisher's tries, installs, views and
 * their conversion, per template, per country and per UTC day, for the agent's human or the signed-in
 * owner. Counted by src/community/stats.ts.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppEnv } from "../types";
import { errors } from "./schemas";
import { ownerOf } from "./app-access";
import { RelayError } from "../../errors";
import { publisherAnalytics } from "../../community/stats";

const counts = { tries: z.number().int(), installs: z.number().int(), views: z.number().int() };
const conversion = z.number().nullable().meta({ description: "installs / tries, null with no tries" });

export function publisherAnalyticsRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "get", path: "/v1/publisher/analytics", tag: "community", auth: "owner",
    summary: "Your templates' tries (config-contract fetches and installs), installs and views over the last days (default 30, at most 90), per template and per UTC day",
    query: z.object({ days: z.coerce.number().int().min(1).max(90).optional() }),
    responses: {
      200: {
        description: "The analytics",
        schema: z.object({
          days: z.number().int(), since: z.string(), ...counts, conversion,
          regions: z.array(z.object({ region: z.string().meta({ description: "country code; empty when unknown" }), tries: z.number().int(), installs: z.number().int() })),
          templates: z.array(z.object({ snapshot_id: z.string(), name: z.string().nullable(), slug: z.string().nullable(), version: z.string().nullable(), ...counts, conversion })),
          series: z.array(z.object({ day: z.string(), ...counts })),
        }).meta({ title: "PublisherAnalytics" }),
      },
      ...errors(400, 401, 403),
    },
  }, async (c, { query }) => {
    const humanId = ownerOf(c);
    if (!humanId) throw new RelayError("agent_not_claimed", "This agent has no human yet; analytics are the publisher's, a human.");
    return c.json(await publisherAnalytics(c.env, humanId, query.days ?? 30));
  });
}
