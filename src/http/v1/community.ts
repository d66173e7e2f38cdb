/**
 * `/v1/community/…` publishing and review (WIRE §2.10): an agent publishes its human's
 * app as a submission and may take its own submission down; operators (spec B's OP:
 * the agent's human is on COMMUNITY_REVIEW_OPERATOR_EMAILS) read the pending queue and
 * one submission whole, approve, reject with a note, and set a publisher's trust level.
 * Installs and the config contract live in their own module.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppEnv } from "../types";
import { humanOfAgent, operatorOfAgent, verifiedHumanOfAgent } from "../../community/callers";
import { publishApp } from "../../community/publish";
import { approveSubmission, pendingQueue, rejectSubmission, submissionById, unpublishSubmission } from "../../community/review";
import { detailOf } from "../../community/submission-views";
import { profileView, setTrust, TRUST_LEVELS } from "../../community/publishers";
import { ownedApp, requireLive } from "./app-access";
import { errors } from "./schemas";
import { publishAnswer, publishBody, submissionDetail, submissionSummary } from "./community-shapes";
import { publisherProfileSchema } from "./publisher";

const notOperator = { 403: { description: "not_a_reviewer: the agent's human is not a community operator" } };
const detailAnswer = { 200: { description: "The submission in full", schema: submissionDetail } };

export function communityRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "post", path: "/v1/community/publish", tag: "community", auth: "agent",
    summary: "Publish an owned app's live version as a template submission (pending review unless the publisher is established and the template reaches no new destination)",
    body: publishBody,
    responses: {
      201: { description: "The submission", schema: publishAnswer },
      ...errors(400, 401, 403, 404, 409, 413, 426),
      422: { description: "template_not_publishable: a webhook with a literal url, embedAncestors or agentTasks (details.issues names each)" },
    },
  }, async (c, { body }) => {
    const human = await verifiedHumanOfAgent(c.env, c.get("agent"));
    const source = requireLive(await ownedApp(c, body.app_id));
    const { app_id: _appId, ...input } = body;
    return c.json(await publishApp(c.env, human, c.get("agent").agentId, source, input), 201);
  });

  defineRoute(app, {
    method: "get", path: "/v1/community/pending", tag: "community", auth: "agent",
    summary: "Pending submissions, expedited first, then oldest first (operators only)",
    query: z.strictObject({ limit: z.coerce.number().int().min(1).max(200).optional(), cursor: z.string().max(500).optional() }),
    responses: {
      200: { description: "A page of the queue", schema: z.object({ items: z.array(submissionSummary), next_cursor: z.string().nullable() }) },
      ...errors(400, 401, 426), ...notOperator,
    },
  }, async (c, { query }) => {
    await operatorOfAgent(c.env, c.get("agent"));
    return c.json(await pendingQueue(c.env, query.limit ?? 25, query.cursor));
  });

  defineRoute(app, {
    method: "get", path: "/v1/community/submissions/:id", tag: "community", auth: "agent",
    summary: "One submission whole: HTML, manifest, seed rows and their sizes, setup steps, external destinations (operators only)",
    responses: { ...detailAnswer, ...errors(401, 404, 426), ...notOperator },
  }, async (c) => {
    await operatorOfAgent(c.env, c.get("agent"));
    return c.json(await detailOf(c.env, await submissionById(c.env, c.req.param("id")!)));
  });

  defineRoute(app, {
    method: "post", path: "/v1/community/submissions/:id/approve", tag: "community", auth: "agent",
    summary: "Approve a submission into the gallery; earlier approved versions of its slug are superseded (operators only)",
    responses: { ...detailAnswer, ...errors(401, 404, 409, 426), ...notOperator },
  }, async (c) => {
    const operator = await operatorOfAgent(c.env, c.get("agent"));
    return c.json(await detailOf(c.env, await approveSubmission(c.env, c.req.param("id")!, operator.id)));
  });

  defineRoute(app, {
    method: "post", path: "/v1/community/submissions/:id/reject", tag: "community", auth: "agent",
    summary: "Reject a submission with a note, which reaches the publisher as an in-app notice on the source app (operators only)",
    body: z.strictObject({ note: z.string().trim().min(1).max(2000) }),
    responses: { ...detailAnswer, ...errors(400, 401, 404, 426), ...notOperator },
  }, async (c, { body }) => {
    const operator = await operatorOfAgent(c.env, c.get("agent"));
    return c.json(await detailOf(c.env, await rejectSubmission(c.env, c.req.param("id")!, operator.id, body.note)));
  });

  defineRoute(app, {
    method: "post", path: "/v1/community/submissions/:id/unpublish", tag: "community", auth: "agent",
    summary: "Take your own submission out of the queue, gallery, search and install link (idempotent; existing installs keep working)",
    responses: { ...detailAnswer, ...errors(401, 403, 404, 426) },
  }, async (c) => {
    const human = await humanOfAgent(c.env, c.get("agent"));
    return c.json(await detailOf(c.env, await unpublishSubmission(c.env, c.req.param("id")!, human.id)));
  });

  defineRoute(app, {
    method: "post", path: "/v1/community/publishers/:handle/trust", tag: "community", auth: "agent",
    summary: "Set a publisher's trust level: new, or established (approved on arrival while no new destination appears) (operators only)",
    body: z.strictObject({ trust_level: z.enum(TRUST_LEVELS) }),
    responses: { 200: { description: "The publisher's profile", schema: publisherProfileSchema }, ...errors(400, 401, 404, 426), ...notOperator },
  }, async (c, { body }) => {
    const operator = await operatorOfAgent(c.env, c.get("agent"));
    return c.json(await profileView(c.env, await setTrust(c.env, c.req.param("handle")!, body.trust_level, operator.id)));
  });
}
