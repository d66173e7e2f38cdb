/**
 * The outbound webhook routes of WIRE §2.6 and §6.2: the delivery journal (list and
 * replay) and the signing secret's rotation. The owner or its agents only; storage and
 * behaviour live in src/effects/webhooks/.
 */
import { errorLogLine } from "../../db/query-errors";
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppEnv } from "../types";
import { ownedApp, requireLive } from "./app-access";
import { errors, isoTime } from "./schemas";
import { listDeliveries, replayDelivery, viewDelivery } from "../../effects/webhooks/journal";
import { runDelivery } from "../../effects/webhooks/deliveries";
import { GRACE_DEFAULT_SECONDS, GRACE_MAX_SECONDS, rotateWebhookSecret } from "../../effects/webhooks/secret";

const deliveryStatus = z.enum(["pending", "delivered", "failed"]);

const deliverySchema = z.object({
  id: z.string(), collection: z.string(), rowKey: z.string(), op: z.string(), url: z.string(), status: deliveryStatus,
  attempts: z.number().int(), responseStatus: z.number().int().nullable(), responseBody: z.string().nullable(),
  payload: z.unknown(), payloadTruncated: z.boolean(), error: z.string().nullable(), replayOfId: z.string().nullable(),
  createdAt: isoTime, deliveredAt: isoTime.nullable(), lastAttemptAt: isoTime.nullable(), nextAttemptAt: isoTime.nullable(),
}).meta({ title: "WebhookDelivery" });

const gone = { 410: { description: "soft_deleted: the app is in the trash" } };

export function webhookRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "get", path: "/v1/apps/:id/webhooks/deliveries", tag: "webhooks", auth: "owner",
    summary: "The webhook delivery journal, newest first (url as host and path; payload cut past 8 KiB, flagged payloadTruncated)",
    query: z.object({
      status: deliveryStatus.optional(), collection: z.string().min(1).max(64).optional(),
      limit: z.coerce.number().int().min(1).max(100).optional(),
    }),
    responses: { 200: { description: "Deliveries", schema: z.object({ deliveries: z.array(deliverySchema) }) }, ...errors(400, 401, 404), ...gone },
  }, async (c, { query }) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    return c.json({ deliveries: await listDeliveries(c.env, target.id, { status: query.status, collection: query.collection, limit: query.limit ?? 25 }) });
  });

  defineRoute(app, {
    method: "post", path: "/v1/apps/:id/webhooks/deliveries/:deliveryId/replay", tag: "webhooks", auth: "owner",
    summary: "Send a delivery again: a new pending delivery of the same rule, target and payload (409 when the rule left the manifest)",
    responses: { 200: { description: "The new delivery", schema: z.object({ delivery: deliverySchema }) }, ...errors(401, 404, 409), ...gone },
  }, async (c) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    const replay = await replayDelivery(c.env, target, c.req.param("deliveryId")!);
    c.executionCtx.waitUntil(runDelivery(c.env, replay.id).catch((err) => console.error(`webhooks: replay ${replay.id} could not be attempted`, errorLogLine(err))));
    return c.json({ delivery: viewDelivery(replay) });
  });

  defineRoute(app, {
    method: "post", path: "/v1/apps/:id/webhook-secret/rotate", tag: "webhooks", auth: "owner",
    summary: "Rotate the webhook signing secret; the previous one keeps signing for grace_seconds (default 3600, at most 86400)",
    body: z.strictObject({ grace_seconds: z.number().int().min(0).max(GRACE_MAX_SECONDS).optional() }), bodyOptional: true,
    responses: {
      200: {
        description: "The new secret and the retained one",
        schema: z.object({ webhook_secret: z.string(), webhook_secret_previous: z.string(), webhook_secret_previous_expires_at: isoTime, rotated_at: isoTime }),
      },
      ...errors(400, 401, 404, 409), ...gone,
    },
  }, async (c, { body }) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    return c.json(await rotateWebhookSecret(c.env, target.id, body.grace_seconds ?? GRACE_DEFAULT_SECONDS));
  });
}
