/**
 * `/v1/reviews…` (WIRE §2.10): create a star review of an installed template, the
 * publisher's answer, reports, and the operators' remove and unhold. Parse, call
 * src/community/reviews.ts, render.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppContext, AppEnv } from "../types";
import { errors, isoTime } from "./schemas";
import { humanOfAgent, operatorOfAgent } from "../../community/callers";
import {
  createReview, MAX_REPORT_REASON, MAX_REVIEW_BODY, removeReview, reportReview, respondToReview, unholdReview,
} from "../../community/reviews";
import { REVIEW_STATUSES } from "../../db/community-installs-schema";

const review = z.object({
  id: z.string(), template_publisher_human_id: z.string(), template_slug: z.string().nullable(), snapshot_id: z.string(), install_id: z.string(),
  reviewer_human_id: z.string(), stars: z.number().int(), body: z.string().nullable(), status: z.enum(REVIEW_STATUSES), held_reason: z.string().nullable(),
  publisher_response: z.string().nullable(), publisher_responded_at: isoTime.nullable(), created_at: isoTime,
}).meta({ title: "Review" });

const slugPart = z.string().min(1).max(64);

function reviewId(c: AppContext): string {
  return c.req.param("id")!;
}

export function reviewRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "post", path: "/v1/reviews", tag: "community", auth: "agent",
    summary: "Review a template your human installed: 1 to 5 stars and an optional body (one per install; verified email; a body with a link or an email address is held for an operator)",
    body: z.strictObject({
      template: z.string().min(3).max(130).optional().meta({ description: "<handle>/<slug>" }), handle: slugPart.optional(), slug: slugPart.optional(),
      stars: z.number().int().min(1).max(5), body: z.string().max(MAX_REVIEW_BODY).optional(),
    }),
    responses: { 201: { description: "The review", schema: review }, ...errors(400, 401, 403, 409) },
  }, async (c, { body }) => c.json(await createReview(c.env, await humanOfAgent(c.env, c.get("agent")), body), 201));

  defineRoute(app, {
    method: "post", path: "/v1/reviews/:id/respond", tag: "community", auth: "agent",
    summary: "Answer a review of one of your templates (null or empty clears the answer)",
    body: z.strictObject({ response: z.string().max(MAX_REVIEW_BODY).nullable() }),
    responses: { 200: { description: "The review", schema: review }, ...errors(400, 401, 403, 404) },
  }, async (c, { body }) => {
    const human = await humanOfAgent(c.env, c.get("agent"));
    return c.json(await respondToReview(c.env, human.id, reviewId(c), body.response));
  });

  defineRoute(app, {
    method: "post", path: "/v1/reviews/:id/report", tag: "community", auth: "agent",
    summary: "Report a review for an operator's attention (one report per account; a repeat answers the first)",
    body: z.strictObject({ reason: z.string().trim().min(1).max(MAX_REPORT_REASON) }),
    responses: { 200: { description: "The report", schema: z.object({ report_id: z.string(), review_id: z.string() }) }, ...errors(400, 401, 403, 404) },
  }, async (c, { body }) => {
    const human = await humanOfAgent(c.env, c.get("agent"));
    return c.json(await reportReview(c.env, human.id, reviewId(c), body.reason));
  });

  for (const [verb, act] of [["remove", removeReview], ["unhold", unholdReview]] as const) {
    defineRoute(app, {
      method: "post", path: `/v1/reviews/:id/${verb}`, tag: "community", auth: "agent", bodyOptional: true,
      summary: verb === "remove" ? "Operator: take a review down (idempotent)" : "Operator: publish a held review (a removed one stays removed: 409)",
      body: z.strictObject({}),
      responses: { 200: { description: "The review", schema: review }, ...errors(400, 401, 403, 404, 409) },
    }, async (c) => {
      await operatorOfAgent(c.env, c.get("agent"));
      return c.json(await act(c.env, reviewId(c)));
    });
  }
}
