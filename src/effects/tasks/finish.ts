/**
 * What a worker does with a task it holds (WIRE §2.8): ack (done, its report kept),
 * nack (the attempt stays consumed; back to the queue after a backoff that doubles per
 * attempt, or dead-lettered once the attempts are used up) and extend-lease (the lease
 * and its credential last longer). Each is one conditional UPDATE on the exact lease the
 * task is under (its credential's hash), so a lease that lapsed and went to another
 * claimer meanwhile cannot be finished by the first. Ack and nack forget the credential's
 * hash, so the credential stops at once. Any agent of the owner may finish the owner's
 * tasks; a task of anyone else's app is `task_not_found`.
 *
 * Ack and extend-lease are one statement when they succeed: the UPDATE itself requires
 * the task to be the owner's and its lease to hold, and only when it changes nothing is
 * the task read to say why (heldTask's refusals). Nack reads the task first, since its
 * backoff depends on the attempts used.
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

/** The refusal when a task's lease changed between reading it and updating it. */
function changedMeanwhile(taskId: string): RelayError {
  return new RelayError("task_not_leased", `Task ${taskId} was finished or leased again meanwhile.`, { task_id: taskId, status: "changed" });
}

/** Runs an update guarded by the very lease `task` is under; refuses when the lease changed meanwhile. */
async function onLease<T>(task: HeldTask, statement: D1PreparedStatement): Promise<T> {
  const row = await statement.first<T>();
  if (!row) throw changedMeanwhile(task.id);
  return row;
}

/** The UPDATE's condition that the task (bound at ?`task`) is the owner's (?`owner`) and its lease holds at ?`now`. */
function heldNow(task: number, owner: number, now: number): string {
  return `id = ?${task} AND app_id IN (SELECT id FROM apps WHERE owner_human_id = ?${owner})
    AND status = 'leased' AND lease_token_hash IS NOT NULL AND lease_expires_at > ?${now}`;
}

/**
 * Runs an update conditioned on heldNow; when it changes nothing, refuses with what the
 * task is now (not the owner's, not leased), or as changed meanwhile if its lease holds again.
 */
async function whileHeld<T>(env: Env, ownerHumanId: string, taskId: string, now: number, statement: D1PreparedStatement): Promise<T> {
  const row = await statement.first<T>();
  if (row) return row;
  throw changedMeanwhile((await heldTask(env, ownerHumanId, taskId, now)).id);
}

export async function ackTask(env: Env, ownerHumanId: string, taskId: string, report: string | null, now = Date.now()): Promise<{ task_id: string; status: "done" }> {
  const done = await whileHeld<{ id: string }>(env, ownerHumanId, taskId, now, env.DB.prepare(
    `UPDATE agent_tasks SET status = 'done', report = ?1, lease_token_hash = NULL, finished_at = ?2, updated_at = ?2
     WHERE ${heldNow(3, 4, 2)} RETURNING id`,
  ).bind(report, now, taskId, ownerHumanId));
  return { task_id: done.id, status: "done" };
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
  if (seconds !== undefined && seconds > settings.maxLeaseSeconds) {
    throw new RelayError("invalid_request", `A lease can be extended by at most ${settings.maxLeaseSeconds} seconds at a time.`, { field: "seconds", limit: settings.maxLeaseSeconds });
  }
  const extended = await whileHeld<{ id: string; lease_expires_at: number }>(env, ownerHumanId, taskId, now, env.DB.prepare(
    `UPDATE agent_tasks SET lease_expires_at = ?1 + coalesce(?2, lease_seconds) * 1000, updated_at = ?1
     WHERE ${heldNow(3, 4, 1)} RETURNING id, lease_expires_at`,
  ).bind(now, seconds ?? null, taskId, ownerHumanId));
  return { task_id: extended.id, lease_expires_at: new Date(extended.lease_expires_at).toISOString() };
}
