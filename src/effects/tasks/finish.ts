/**
 * What a worker does with a task it holds (WIRE §2.8): ack (done, its report kept),
 * nack (the attempt stays consumed; back to the queue after a backoff that doubles per
 * attempt, or dead-lettered once the attempts are used up) and extend-lease (the lease
 * and its credential last longer). Each is one conditional UPDATE on the exact lease the
 * task is under (its credential's hash), so a lease that lapsed and went to another
 * claimer meanwhile cannot be finished by the first. Ack and nack forget the credential's
 * hash, so the credential stops at once. Any agent of the owner may finish the owner's
 * tasks; a task of anyone else's app is `task_not_found`.
 */
import { RelayError } from "../../errors";
import { retryDelayMs, taskSettings } from "./settings";

interface HeldTask {
  id: string;
  status: string;
  attempts: number;
  lease_expires_at: number | null;
  lease_token_hash: string | null;
  lease_seconds: number;
}

/** The task as it is now, if it belongs to an app of the owner; refused unless its lease holds at `now`. */
async function heldTask(env: Env, ownerHumanId: string, taskId: string, now: number): Promise<HeldTask> {
  const task = await env.DB.prepare(
    `SELECT id, status, attempts, lease_expires_at, lease_token_hash, lease_seconds FROM agent_tasks
     WHERE id = ?1 AND app_id IN (SELECT id FROM apps WHERE owner_human_id = ?2)`,
  ).bind(taskId, ownerHumanId).first<HeldTask>();
  if (!task) throw new RelayError("task_not_found", `No agent task "${taskId.slice(0, 100)}" belongs to an app of yours.`, { task_id: taskId.slice(0, 100) });
  if (task.status !== "leased" || task.lease_token_hash === null || (task.lease_expires_at ?? 0) <= now) {
    const status = task.status === "leased" ? "lease_lapsed" : task.status;
    throw new RelayError("task_not_leased", `Task ${task.id} is not leased any more (${status}).`, { task_id: task.id, status });
  }
  return task;
}

/** Runs an update guarded by the very lease `task` is under; refuses when the lease changed meanwhile. */
async function onLease<T>(task: HeldTask, statement: D1PreparedStatement): Promise<T> {
  const row = await statement.first<T>();
  if (!row) throw new RelayError("task_not_leased", `Task ${task.id} was finished or leased again meanwhile.`, { task_id: task.id, status: "changed" });
  return row;
}

export async function ackTask(env: Env, ownerHumanId: string, taskId: string, report: string | null, now = Date.now()): Promise<{ task_id: string; status: "done" }> {
  const task = await heldTask(env, ownerHumanId, taskId, now);
  await onLease(task, env.DB.prepare(
    `UPDATE agent_tasks SET status = 'done', report = ?1, lease_token_hash = NULL, finished_at = ?2, updated_at = ?2
     WHERE id = ?3 AND status = 'leased' AND lease_token_hash = ?4 RETURNING id`,
  ).bind(report, now, task.id, task.lease_token_hash));
  return { task_id: task.id, status: "done" };
}

export interface NackAnswer {
  task_id: string;
  status: "queued" | "dead";
  attempts: number;
  available_at: string | null;
}

export async function nackTask(env: Env, ownerHumanId: string, taskId: string, report: string | null, now = Date.now()): Promise<NackAnswer> {
  const settings = taskSettings(env);
  const task = await heldTask(env, ownerHumanId, taskId, now);
  const dead = task.attempts >= settings.maxAttempts;
  const availableAt = now + retryDelayMs(settings, task.attempts);
  await onLease(task, env.DB.prepare(
    `UPDATE agent_tasks SET status = ?1, report = ?2, lease_token_hash = NULL, lease_expires_at = NULL, leased_by = NULL,
       available_at = ?3, finished_at = ?4, updated_at = ?5
     WHERE id = ?6 AND status = 'leased' AND lease_token_hash = ?7 RETURNING id`,
  ).bind(dead ? "dead" : "queued", report, dead ? now : availableAt, dead ? now : null, now, task.id, task.lease_token_hash));
  return { task_id: task.id, status: dead ? "dead" : "queued", attempts: task.attempts, available_at: dead ? null : new Date(availableAt).toISOString() };
}

export async function extendLease(
  env: Env, ownerHumanId: string, taskId: string, seconds: number | undefined, now = Date.now(),
): Promise<{ task_id: string; lease_expires_at: string }> {
  const settings = taskSettings(env);
  const task = await heldTask(env, ownerHumanId, taskId, now);
  if (seconds !== undefined && seconds > settings.maxLeaseSeconds) {
    throw new RelayError("invalid_request", `A lease can be extended by at most ${settings.maxLeaseSeconds} seconds at a time.`, { field: "seconds", limit: settings.maxLeaseSeconds });
  }
  const until = now + (seconds ?? task.lease_seconds) * 1000;
  await onLease(task, env.DB.prepare(
    "UPDATE agent_tasks SET lease_expires_at = ?1, updated_at = ?2 WHERE id = ?3 AND status = 'leased' AND lease_token_hash = ?4 RETURNING id",
  ).bind(until, now, task.id, task.lease_token_hash));
  return { task_id: task.id, lease_expires_at: new Date(until).toISOString() };
}
