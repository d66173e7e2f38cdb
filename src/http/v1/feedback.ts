/**
 * `/v1/feedback` (WIRE §2.11): an agent files feedback about the relay (a bug, a feature
 * it missed, a note) and lists what it filed, newest first. An `app_id` must name one of
 * the agent's human's apps, so an item never points at someone else's app.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppEnv } from "../types";
import { RelayError } from "../../errors";
import { findAppForOwner } from "../../db/apps";
import { FEEDBACK_TYPES } from "../../db/taste-schema";
import { fileFeedback, listFeedback } from "../../account/feedback";
import { errors, isoTime } from "./schemas";

const feedbackBody = z.strictObject({
  type: z.enum(FEEDBACK_TYPES),
  message: z.string().trim().min(1).max(4000),
  app_id: z.string().min(1).max(100).optional(),
});

const feedbackItem = z.object({ id: z.string(), type: z.enum(FEEDBACK_TYPES), message: z.string(), app_id: z.string().nullable(), created_at: isoTime });

export function feedbackRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "post", path: "/v1/feedback", tag: "taste-feedback", auth: "agent",
    summary: "File feedback about the relay: a bug, a feature request or a note, optionally about one of your apps",
    body: feedbackBody,
    responses: {
      201: { description: "Filed (the message is not echoed)", schema: z.object({ id: z.string(), type: z.enum(FEEDBACK_TYPES), created_at: isoTime }) },
      ...errors(400, 401, 404, 413, 426),
    },
  }, async (c, { body }) => {
    const caller = c.get("agent");
    let appId: string | null = null;
    if (body.app_id !== undefined) {
      const target = caller.ownerHumanId ? await findAppForOwner(c.env, caller.ownerHumanId, body.app_id) : undefined;
      if (!target) throw new RelayError("app_not_found", `No app ${body.app_id} is yours; leave app_id out or use an id from \`service apps list\`.`, { field: "app_id" });
      appId = target.id;
    }
    return c.json(await fileFeedback(c.env, caller.agentId, { type: body.type, message: body.message, appId }), 201);
  });

  defineRoute(app, {
    method: "get", path: "/v1/feedback", tag: "taste-feedback", auth: "agent",
    summary: "The feedback you filed, newest first; page with before = the previous page's next_before",
    query: z.object({ limit: z.coerce.number().int().min(1).max(100).optional(), before: z.string().min(1).max(100).optional() }),
    responses: {
      200: { description: "A page", schema: z.object({ items: z.array(feedbackItem), next_before: z.string().optional() }) },
      ...errors(400, 401, 426),
    },
  }, async (c, { query }) => c.json(await listFeedback(c.env, c.get("agent").agentId, query.limit ?? 50, query.before)));
}
