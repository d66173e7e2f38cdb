/**
 * The `tasks` cron sweep: leases that lapsed go back to the queue (their attempt counted;
 * a claim would take them anyway, this makes the owner's list say so and ends their
 * credentials' hashes), lapsed leases without attempts left are dead-lettered, queued
 * tasks past their ttl expire, and finished tasks older than AGENT_TASKS_RETENTION_DAYS
 * are pruned.
 */
import { settleLapsed } from "./claim";
import { taskSettings } from "./settings";

const DAY_MS = 86_400_000;

export async function sweepTasks(env: Env, now = Date.now()): Promise<void> {
  const settings = taskSettings(env);
  await settleLapsed(env, settings, now);
  await env.DB.batch([
    env.DB.prepare(`UPDATE agent_tasks SET status = 'queued', lease_token_hash = NULL, lease_expires_at = NULL, leased_by = NULL, updated_at = ?1
      WHERE status = 'leased' AND lease_expires_at <= ?1 AND attempts < ?2`).bind(now, settings.maxAttempts),
    env.DB.prepare("DELETE FROM agent_tasks WHERE status IN ('done', 'dead', 'expired', 'discarded', 'capped') AND updated_at < ?1")
      .bind(now - settings.retentionDays * DAY_MS),
  ]);
}
