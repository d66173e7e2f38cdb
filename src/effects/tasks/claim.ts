/**
 * Claiming tasks (WIRE §2.8 `POST /v1/agent-tasks/claim`, and the wake socket's assign):
 * up to `max` claimable tasks across the owner's live apps (or the listed ones), oldest
 * first, each leased with a fresh `svcc_` credential whose sha256 is stored on the task.
 *
 * Two claimers never hold the same task: each task is leased by its own conditional UPDATE
 * (still claimable, else nothing), all of them in one D1 batch; a task another claimer
 * took in between simply returns no row, and the claim hands out that many fewer.
 * A claimable task is a queued one whose backoff has passed and whose ttl has not, or a
 * leased one whose lease lapsed with attempts to spare (the worker died: the task comes
 * back, its attempt counted). Before looking, lapsed tasks out of attempts are
 * dead-lettered and queued ones past their ttl expire (settleLapsed, also the sweep's).
 */
import { mintSecret, sha256Hex } from "../../auth/tokens";
import { inJsonList } from "../../db/in-list";
import { envelopeOf, type LeasedTask, type TaskEnvelope } from "./envelope";
import { taskSettings, type TaskSettings } from "./settings";

export interface ClaimScope {
  ownerHumanId: string;
  /** Only these apps (of the owner); absent: every app of the owner. */
  appIds?: string[];
  /** Who holds the lease (the claiming agent), for the owner's view. */
  leasedBy: string;
}

/**
 * `columns` of the owner's live apps (optionally only the listed ones), the owner bound at
 * ?`first` and the list, when there is one, as one JSON array after it: D1 takes at most
 * 100 bound parameters a statement, and a claim may list 100 apps.
 */
function ownedApps(scope: Pick<ClaimScope, "ownerHumanId" | "appIds">, first: number, columns = "id"): { sql: string; binds: unknown[] } {
  const listed = scope.appIds?.length ? ` AND id ${inJsonList(`?${first + 1}`)}` : "";
  return {
    sql: `SELECT ${columns} FROM apps WHERE owner_human_id = ?${first} AND status IN ('active', 'dormant')${listed}`,
    binds: scope.appIds?.length ? [scope.ownerHumanId, JSON.stringify(scope.appIds)] : [scope.ownerHumanId],
  };
}

/** The statement's owner filter: tasks of the owner's live apps, optionally only the listed ones. */
function appFilter(scope: Pick<ClaimScope, "ownerHumanId" | "appIds">, first: number): { sql: string; binds: unknown[] } {
  const apps = ownedApps(scope, first);
  return { sql: `app_id IN (${apps.sql})`, binds: apps.binds };
}

/** Whether a task (columns prefixed with `table`) may be claimed at ?1 (now) with ?2 (max attempts). */
function claimable(table = ""): string {
  const t = table ? `${table}.` : "";
  return `((${t}status = 'queued' AND ${t}available_at <= ?1 AND (${t}expires_at IS NULL OR ${t}expires_at > ?1))
    OR (${t}status = 'leased' AND ${t}lease_expires_at <= ?1 AND ${t}attempts < ?2))`;
}

/**
 * The statements that dead-letter lapsed leases which used their last attempt and expire
 * queued tasks past their ttl; for one owner's apps, or every app (the sweep).
 */
function settleStatements(env: Env, settings: TaskSettings, now: number, scope?: Pick<ClaimScope, "ownerHumanId" | "appIds">): D1PreparedStatement[] {
  const filter = scope ? appFilter(scope, 3) : { sql: "1 = 1", binds: [] };
  return [
    env.DB.prepare(`UPDATE agent_tasks SET status = 'dead', lease_token_hash = NULL, finished_at = ?1, updated_at = ?1,
        report = coalesce(report, 'lease lapsed on the last attempt')
      WHERE status = 'leased' AND lease_expires_at <= ?1 AND attempts >= ?2 AND ${filter.sql}`).bind(now, settings.maxAttempts, ...filter.binds),
    env.DB.prepare(`UPDATE agent_tasks SET status = 'expired', finished_at = ?1, updated_at = ?1
      WHERE status = 'queued' AND expires_at <= ?1 AND ?2 = ?2 AND ${filter.sql}`).bind(now, settings.maxAttempts, ...filter.binds),
  ];
}

/** Settles lapsed and expired tasks (settleStatements) in one batch: the sweep's pass. */
export async function settleLapsed(env: Env, settings: TaskSettings, now: number, scope?: Pick<ClaimScope, "ownerHumanId" | "appIds">): Promise<void> {
  await env.DB.batch(settleStatements(env, settings, now, scope));
}

/**
 * Two D1 round trips when there is something to claim, one when there is not: the first
 * batch settles the owner's lapsed and expired tasks and counts what is claimable now
 * (which bounds how many credentials to mint); the second leases each task with its own
 * conditional UPDATE and reads the owner's app slugs for the envelopes, in the same
 * transaction.
 */
export async function claimTasks(env: Env, scope: ClaimScope, max: number, now = Date.now()): Promise<TaskEnvelope[]> {
  const settings = taskSettings(env);
  const filter = appFilter(scope, 4);
  const looked = await env.DB.batch<{ id: string }>([
    ...settleStatements(env, settings, now, scope),
    env.DB.prepare(`SELECT id FROM agent_tasks WHERE ${claimable()} AND ${filter.sql} LIMIT ?3`)
      .bind(now, settings.maxAttempts, max, ...filter.binds),
  ]);
  const available = looked[looked.length - 1].results.length;
  if (available === 0) return [];
  const tokens = Array.from({ length: available }, () => mintSecret("leaseCredential"));
  const hashes = await Promise.all(tokens.map((token) => sha256Hex(token)));
  const slugsOfApps = ownedApps(scope, 1, "id, slug");
  const results = await env.DB.batch<unknown>([
    ...hashes.map((hash) => env.DB.prepare(
      `UPDATE agent_tasks SET status = 'leased', attempts = attempts + 1, lease_expires_at = ?1 + lease_seconds * 1000,
         lease_token_hash = ?3, updated_at = ?1, leased_by = ?${4 + filter.binds.length}
       WHERE id = (SELECT id FROM agent_tasks WHERE ${claimable()} AND ${filter.sql} ORDER BY available_at, id LIMIT 1)
       RETURNING id, app_id, task_type, prompt, context, collection, row_key, reads, writes, lease_expires_at`,
    ).bind(now, settings.maxAttempts, hash, ...filter.binds, scope.leasedBy)),
    env.DB.prepare(slugsOfApps.sql).bind(...slugsOfApps.binds),
  ]);
  const leased = results.slice(0, available) as D1Result<LeasedTask>[];
  const claimed = leased.map((result, index) => ({ task: result.results[0], token: tokens[index] })).filter((item) => item.task !== undefined);
  const slugs = new Map((results[available] as D1Result<{ id: string; slug: string }>).results.map((app) => [app.id, app.slug]));
  return claimed.map(({ task, token }) => envelopeOf(task, slugs.get(task.app_id) ?? "", token, settings.apiBase));
}
