/**
 * Waking an owner's task workers (WIRE §3.2): the owner's TaskWake object assigns the
 * new task to a wake socket with credit or tells the others one is available. This is the
 * small function other engines call too: an inbound hook whose rule has `wake: true`
 * calls `wakeApp` after an accepted delivery. Waking is a hint; workers poll anyway.
 */
import { eq } from "drizzle-orm";
import { db } from "../../db/client";
import { apps } from "../../db/apps-schema";
import { taskWake } from "../../../durable-objects/task-wake/contract";

/** Wakes the workers of `ownerHumanId` for a task of `appId`; answers how many sockets were reached. */
export function wakeOwner(env: Env, ownerHumanId: string, appId: string): Promise<number> {
  return taskWake(env, ownerHumanId).wake(appId);
}

/** Wakes the workers of the app's owner (0 when the app is gone). */
export async function wakeApp(env: Env, appId: string): Promise<number> {
  const app = (await db(env).select({ owner: apps.ownerHumanId }).from(apps).where(eq(apps.id, appId)).limit(1))[0];
  return app ? wakeOwner(env, app.owner, appId) : 0;
}

/** Whether an agent key is live, its agent not paused and still the owner's (checked before a wake socket is assigned tasks). */
export async function agentKeyHolds(env: Env, keyId: string, ownerHumanId: string): Promise<boolean> {
  const row = await env.DB.prepare(
    `SELECT 1 AS live FROM agent_keys k JOIN agents a ON a.id = k.agent_id
     WHERE k.id = ?1 AND k.revoked_at IS NULL AND a.paused_at IS NULL AND a.owner_human_id = ?2`,
  ).bind(keyId, ownerHumanId).first<{ live: number }>();
  return row !== null;
}
