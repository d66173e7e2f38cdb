/**
 * What people see of the task queue: the owner's list of an app's tasks (every state,
 * newest first, with attempts, lease and report), and the page's view of one row's tasks
 * (WIRE §4.3 `/_svc/tasks`): the latest task of each rule for that row, as `queued`,
 * `working`, `done`, `failed` or `expired`, never its prompt, credential or report. Tasks
 * held back by the hourly cap or discarded with their rule are the owner's to see only.
 */
import { and, desc, eq, lt, notInArray } from "drizzle-orm";
import { db } from "../../db/client";
import { agentTasks, type TaskStatus } from "../../db/tasks-schema";

type TaskRow = typeof agentTasks.$inferSelect;

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

export interface OwnerTaskView {
  task_id: string;
  rule_id: string;
  task_type: string;
  collection: string;
  row_key: string;
  op: string;
  status: TaskStatus;
  attempts: number;
  available_at: string;
  expires_at: string | null;
  lease_expires_at: string | null;
  report: string | null;
  created_at: string;
  finished_at: string | null;
}

export function ownerView(task: TaskRow): OwnerTaskView {
  return {
    task_id: task.id, rule_id: task.ruleId, task_type: task.taskType, collection: task.collection, row_key: task.rowKey, op: task.op,
    status: task.status, attempts: task.attempts, available_at: iso(task.availableAt)!, expires_at: iso(task.expiresAt),
    lease_expires_at: task.status === "leased" ? iso(task.leaseExpiresAt) : null, report: task.report,
    created_at: iso(task.createdAt)!, finished_at: iso(task.finishedAt),
  };
}

export interface TaskListQuery {
  status?: TaskStatus;
  limit: number;
  /** A task id of the previous page: only older tasks. */
  before?: string;
}

/** An app's tasks, newest first, one page; `next_before` names the page after. */
export async function listTasks(env: Env, appId: string, query: TaskListQuery): Promise<{ tasks: OwnerTaskView[]; next_before: string | null }> {
  const rows = await db(env).select().from(agentTasks).where(and(
    eq(agentTasks.appId, appId),
    query.status ? eq(agentTasks.status, query.status) : undefined,
    query.before ? lt(agentTasks.id, query.before) : undefined,
  )).orderBy(desc(agentTasks.id)).limit(query.limit + 1);
  const page = rows.slice(0, query.limit);
  return { tasks: page.map(ownerView), next_before: rows.length > query.limit ? page[page.length - 1].id : null };
}

export type PageTaskStatus = "queued" | "working" | "done" | "failed" | "expired";

const PAGE_STATUS: Partial<Record<TaskStatus, PageTaskStatus>> = { queued: "queued", leased: "working", done: "done", dead: "failed", expired: "expired" };

export interface PageTaskView {
  task_type: string;
  status: PageTaskStatus;
  created_at: string;
  updated_at: string;
}

/** The latest task of each rule for one row, as the page sees it. */
export async function rowTasks(env: Env, appId: string, collection: string, rowKey: string, now = Date.now()): Promise<PageTaskView[]> {
  const rows = await db(env).select().from(agentTasks).where(and(
    eq(agentTasks.appId, appId), eq(agentTasks.collection, collection), eq(agentTasks.rowKey, rowKey),
    notInArray(agentTasks.status, ["capped", "discarded"]),
  )).orderBy(desc(agentTasks.id)).limit(100);
  const latest = new Map<string, TaskRow>();
  for (const row of rows) if (!latest.has(row.ruleId)) latest.set(row.ruleId, row);
  return [...latest.values()].map((task) => ({
    // A lapsed lease is back in the queue for the next claim.
    task_type: task.taskType, status: task.status === "leased" && (task.leaseExpiresAt ?? 0) <= now ? "queued" : PAGE_STATUS[task.status]!, created_at: iso(task.createdAt)!, updated_at: iso(task.updatedAt)!,
  }));
}

