/**
 * An agentTasks outbox entry becomes a queued task in D1 (WIRE §5.5 agentTasks). The rule
 * is looked up in the live manifest now: a rule gone since the write (or whose prompt
 * changed, which is a new rule identity) makes nothing. The task keeps the rule's prompt,
 * reads and writes as they are now, and the triggering row as its context. One statement
 * inserts it, unique by the outbox entry (a redelivered pointer makes nothing twice), and
 * decides against the app's hourly cap in the same breath: a task over the cap is recorded
 * as `capped`, never claimable, so the owner can see what was held back.
 * Redeploying discards the queued tasks of rules the new manifest no longer has.
 */
import { and, eq, inArray } from "drizzle-orm";
import { db } from "../../db/client";
import { apps } from "../../db/apps-schema";
import { liveManifest } from "../../apps/members";
import { newId } from "../../auth/tokens";
import type { EffectChange } from "../../../durable-objects/app-store/contract";
import type { CompiledManifest } from "../../manifest";
import type { DeployGuard } from "../../db/apps";
import { taskSettings } from "./settings";
import { recordFlow } from "../../account/usage";

const HOUR_MS = 3_600_000;

/** What recording an entry came to: a task to offer to workers, or nothing to do. */
export type Recorded = { queued: true; taskId: string; ownerHumanId: string } | { queued: false };

export async function recordTask(env: Env, appId: string, source: string, ruleId: string, change: EffectChange, now = Date.now()): Promise<Recorded> {
  if (change.suppressed) return { queued: false };
  const app = (await db(env).select().from(apps).where(and(eq(apps.id, appId), inArray(apps.status, ["active", "dormant"]))).limit(1))[0];
  if (!app) return { queued: false };
  const rule = (await liveManifest(env, app))?.agentTasks.find((candidate) => candidate.id === ruleId);
  if (!rule) return { queued: false };
  const settings = taskSettings(env);
  const id = newId("task_");
  const ttlSeconds = rule.ttlSeconds ?? settings.ttlSeconds;
  const context = JSON.stringify({ row: { key: change.key, data: change.data } });
  const inserted = await env.DB.prepare(
    `INSERT INTO agent_tasks (id, app_id, source, rule_id, task_type, prompt, collection, row_key, op, context, reads, writes,
       lease_seconds, status, attempts, available_at, expires_at, created_at, updated_at)
     SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13,
       CASE WHEN (SELECT count(*) FROM agent_tasks WHERE app_id = ?2 AND created_at > ?14 AND status != 'capped') < ?15 THEN 'queued' ELSE 'capped' END,
       0, ?16, ?17, ?16, ?16
     WHERE true
     ON CONFLICT (app_id, source) DO NOTHING
     RETURNING status`,
  ).bind(
    id, appId, source, ruleId, rule.taskType, rule.prompt, change.collection, change.key, change.op, context,
    JSON.stringify(rule.reads), JSON.stringify(rule.writes), rule.leaseSeconds ?? settings.leaseSeconds,
    now - HOUR_MS, settings.hourlyCap, now, now + ttlSeconds * 1000,
  ).first<{ status: string }>();
  if (inserted === null) {
    // A redelivered pointer: the task exists. While it still waits, wake the workers again
    // (the first delivery may have died between recording it and waking them).
    const existing = await env.DB.prepare("SELECT id, status FROM agent_tasks WHERE app_id = ?1 AND source = ?2")
      .bind(appId, source).first<{ id: string; status: string }>();
    return existing?.status === "queued" ? { queued: true, taskId: existing.id, ownerHumanId: app.ownerHumanId } : { queued: false };
  }
  if (inserted.status !== "queued") {
    console.warn(`agent tasks: app ${appId} is over its hourly cap; task of rule ${ruleId} held back`);
    return { queued: false };
  }
  // Counted once, when the task is made (a redelivered pointer made none).
  await recordFlow(env, { humanId: app.ownerHumanId, appId, metric: "agent_tasks", at: new Date(now) });
  return { queued: true, taskId: id, ownerHumanId: app.ownerHumanId };
}

/**
 * On a redeploy: the statement that discards the queued tasks of rules the new manifest
 * no longer has (removed, or a prompt edited into a new identity), carrying `guard` so it
 * rides in the redeploy's own D1 batch (src/db/apps.ts DeployGuard). Leased ones finish
 * as they are.
 */
export function discardStaleTasksStatement(env: Env, appId: string, manifest: CompiledManifest, guard: DeployGuard, now = Date.now()): D1PreparedStatement {
  return env.DB.prepare(
    "UPDATE agent_tasks SET status = 'discarded', finished_at = ?, updated_at = ? " +
    `WHERE app_id = ? AND status = 'queued' AND rule_id NOT IN (SELECT value FROM json_each(?)) AND ${guard.condition}`,
  ).bind(now, now, appId, JSON.stringify(manifest.agentTasks.map((rule) => rule.id)), ...guard.binds);
}
