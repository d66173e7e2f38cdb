/**
 * The agent task routes (WIRE §2.8): a worker claims tasks across its owner's apps, then
 * acks, nacks or extends each lease; the owner lists an app's tasks in every state.
 * Behaviour and storage live in src/effects/tasks/; the wake socket's upgrade is
 * src/http/v1/agent-task-stream.ts.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppContext, AppEnv } from "../types";
import { RelayError } from "../../errors";
import { ownedApp, requireLive } from "./app-access";
import { errors, isoTime } from "./schemas";
import { claimTasks } from "../../effects/tasks/claim";
import { ackTask, extendLease, nackTask } from "../../effects/tasks/finish";
import { listTasks } from "../../effects/tasks/views";
import { TASK_STATUSES } from "../../db/tasks-schema";

/** The most tasks one claim hands out. */
export const CLAIM_MAX = 100;
/** The longest report kept (the CLI sends at most the last 3,900 characters). */
const REPORT_MAX = 10_000;

const envelope = z.object({
  task_id: z.string(), app_id: z.string(), app_slug: z.string(), task_type: z.string(), prompt: z.string(),
  context: z.object({ row: z.object({ key: z.string(), data: z.unknown() }) }), context_warning: z.string(),
  collection: z.string(), row_key: z.string(), reads: z.array(z.string()), writes: z.array(z.string()),
  lease_expires_at: isoTime, api_base: z.string(), credential: z.string(),
}).meta({ title: "TaskEnvelope" });

const ownerTask = z.object({
  task_id: z.string(), rule_id: z.string(), task_type: z.string(), collection: z.string(), row_key: z.string(), op: z.string(),
  status: z.enum(TASK_STATUSES), attempts: z.number().int(), available_at: isoTime, expires_at: isoTime.nullable(),
  lease_expires_at: isoTime.nullable(), report: z.string().nullable(), created_at: isoTime, finished_at: isoTime.nullable(),
}).meta({ title: "AgentTask" });

const report = z.string().max(REPORT_MAX);

/** The owner whose tasks the agent works; an agent nobody claimed owns no apps. */
function ownerOfAgent(c: AppContext): string | null {
  return c.get("agent").ownerHumanId;
}

function requireOwner(c: AppContext, taskId: string): string {
  const owner = ownerOfAgent(c);
  if (owner === null) throw new RelayError("task_not_found", `No agent task "${taskId.slice(0, 100)}" belongs to an app of yours.`, { task_id: taskId.slice(0, 100) });
  return owner;
}

export function agentTaskRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "post", path: "/v1/agent-tasks/claim", tag: "agent-tasks", auth: "agent",
    summary: "Lease up to max queued tasks across your apps (or app_ids), each with a fresh svcc_ credential that ends with its lease",
    body: z.strictObject({ max: z.number().int().min(1).max(CLAIM_MAX), app_ids: z.array(z.string().min(1).max(100)).min(1).max(100).optional() }),
    responses: { 200: { description: "The leased tasks (possibly none)", schema: z.object({ tasks: z.array(envelope) }) }, ...errors(400, 401) },
  }, async (c, { body }) => {
    const owner = ownerOfAgent(c);
    if (owner === null) return c.json({ tasks: [] });
    const tasks = await claimTasks(c.env, { ownerHumanId: owner, appIds: body.app_ids, leasedBy: c.get("agent").agentId }, body.max);
    return c.json({ tasks });
  });

  defineRoute(app, {
    method: "post", path: "/v1/agent-tasks/:taskId/ack", tag: "agent-tasks", auth: "agent",
    summary: "Mark a leased task done, keeping its report; its lease credential stops at once",
    body: z.strictObject({ report: report.optional() }), bodyOptional: true,
    responses: { 200: { description: "Done", schema: z.object({ task_id: z.string(), status: z.literal("done") }) }, ...errors(400, 401, 404, 409) },
  }, async (c, { body }) => {
    const taskId = c.req.param("taskId")!;
    return c.json(await ackTask(c.env, requireOwner(c, taskId), taskId, body.report ?? null));
  });

  defineRoute(app, {
    method: "post", path: "/v1/agent-tasks/:taskId/nack", tag: "agent-tasks", auth: "agent",
    summary: "Give a leased task back: the attempt stays used, the task is queued again after a backoff, or dead-lettered after the last attempt",
    body: z.strictObject({ report: report.optional() }), bodyOptional: true,
    responses: {
      200: {
        description: "Where the task went",
        schema: z.object({ task_id: z.string(), status: z.enum(["queued", "dead"]), attempts: z.number().int(), available_at: isoTime.nullable() }),
      },
      ...errors(400, 401, 404, 409),
    },
  }, async (c, { body }) => {
    const taskId = c.req.param("taskId")!;
    return c.json(await nackTask(c.env, requireOwner(c, taskId), taskId, body.report ?? null));
  });

  defineRoute(app, {
    method: "post", path: "/v1/agent-tasks/:taskId/extend-lease", tag: "agent-tasks", auth: "agent",
    summary: "Extend a held lease (and its credential) to seconds from now (default the rule's lease length)",
    body: z.strictObject({ seconds: z.number().int().min(1).optional() }), bodyOptional: true,
    responses: { 200: { description: "The new lease end", schema: z.object({ task_id: z.string(), lease_expires_at: isoTime }) }, ...errors(400, 401, 404, 409) },
  }, async (c, { body }) => {
    const taskId = c.req.param("taskId")!;
    return c.json(await extendLease(c.env, requireOwner(c, taskId), taskId, body.seconds));
  });

  defineRoute(app, {
    method: "get", path: "/v1/apps/:id/agent-tasks", tag: "agent-tasks", auth: "owner",
    summary: "The app's agent tasks, newest first: queued, leased, done, dead (dead-lettered), expired, discarded and capped",
    query: z.object({
      status: z.enum(TASK_STATUSES).optional(), limit: z.coerce.number().int().min(1).max(100).optional(), before: z.string().min(1).max(100).optional(),
    }),
    responses: {
      200: { description: "Tasks", schema: z.object({ tasks: z.array(ownerTask), next_before: z.string().nullable() }) },
      ...errors(400, 401, 404), 410: { description: "soft_deleted: the app is in the trash" },
    },
  }, async (c, { query }) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    return c.json(await listTasks(c.env, target.id, { status: query.status, limit: query.limit ?? 50, before: query.before }));
  });
}
