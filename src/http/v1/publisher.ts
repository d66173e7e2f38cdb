/**
 * `/v1/publisher` (WIRE §2.10): the calling agent's human's publisher profile: read it,
 * claim the permanent handle (verified email required), edit the display fields. A human
 * who never claimed a handle still has a profile: `claimed: false`, `handle: null`.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppEnv } from "../types";
import { humanOfAgent, verifiedHumanOfAgent } from "../../community/callers";
import { claimHandle, editProfile, ensurePublisher, HANDLE_PATTERN, profileView } from "../../community/publishers";
import { errors, isoTime } from "./schemas";

export const publisherProfileSchema = z.object({
  handle: z.string().nullable(), display_name: z.string().nullable(), bio: z.string().nullable(), url: z.string().nullable(),
  claimed: z.boolean(), claimed_at: isoTime.nullable(), created_at: isoTime, first_published_at: isoTime.nullable(),
  approved_template_count: z.number().int(), rating_count: z.number().int(), rating_sum: z.number().int(),
  trust_level: z.enum(["new", "established"]),
});

const webUrl = z.string().max(200).url().refine((value) => /^https?:\/\//i.test(value), "must be an http or https URL");

export function publisherRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "get", path: "/v1/publisher", tag: "community", auth: "agent",
    summary: "Your human's publisher profile (claimed: false and handle null until a handle is claimed)",
    responses: { 200: { description: "The profile", schema: publisherProfileSchema }, ...errors(401, 403, 426) },
  }, async (c) => {
    const human = await humanOfAgent(c.env, c.get("agent"));
    return c.json(await profileView(c.env, await ensurePublisher(c.env, human.id)));
  });

  defineRoute(app, {
    method: "post", path: "/v1/publisher/claim", tag: "community", auth: "agent",
    summary: "Claim your permanent publisher handle (lowercase letters, digits and inner hyphens, 3 to 32 characters; verified email required)",
    body: z.strictObject({ handle: z.string().regex(HANDLE_PATTERN, "must be 3 to 32 lowercase letters, digits or inner hyphens") }),
    responses: {
      200: { description: "The profile with its handle", schema: publisherProfileSchema },
      ...errors(400, 401, 403, 426),
      409: { description: "handle_taken (another publisher holds it) or handle_already_claimed (yours is set for good)" },
    },
  }, async (c, { body }) => {
    const human = await verifiedHumanOfAgent(c.env, c.get("agent"));
    return c.json(await profileView(c.env, await claimHandle(c.env, human.id, body.handle)));
  });

  defineRoute(app, {
    method: "post", path: "/v1/publisher/update", tag: "community", auth: "agent",
    summary: "Edit display name (≤80), bio (≤500) and url (http(s), ≤200): null clears a field, an omitted one is left alone",
    body: z.strictObject({
      display_name: z.string().trim().min(1).max(80).nullable().optional(),
      bio: z.string().max(500).nullable().optional(),
      url: webUrl.nullable().optional(),
    }),
    responses: { 200: { description: "The updated profile", schema: publisherProfileSchema }, ...errors(400, 401, 403, 426) },
  }, async (c, { body }) => {
    const human = await humanOfAgent(c.env, c.get("agent"));
    return c.json(await profileView(c.env, await editProfile(c.env, human.id, body)));
  });
}
