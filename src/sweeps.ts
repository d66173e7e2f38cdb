/**
 * Cron sweeps, each named: `expiries` drops what has expired so D1 does not grow without
 * bound (spent or expired codes, links, app-session grants, invitations, transfer offers,
 * deletion links and preview tokens, dead sessions, old limiter windows, old dev mail);
 * `trash` purges apps whose trash window has passed; `webhooks` takes overdue deliveries a
 * step and prunes the delivery journal; `ingest` prunes the inbound delivery journal; `digests` sends notification digests whose
 * message never came and prunes old notifications; `schedules` fires the manifests'
 * schedule rules for each app's local day; `tasks` returns lapsed agent task leases to the
 * queue, expires and prunes tasks; `attachments` removes presigned uploads never confirmed; `imports` purges
 * the half-made app of an import that died midway and removes the archive entries it staged; `seeds` purges the hidden app
 * of a create that died before its starter rows were in. The cron trigger runs them all, and
 * so does `POST /__dev/cron` in development mode, at any instant it is given.
 */
import { sweepRateLimits } from "./db/rate-limit";
import { purgeExpiredTrash } from "./apps/trash";
import { runOverdueDeliveries } from "./effects/webhooks/deliveries";
import { pruneJournal } from "./effects/webhooks/journal";
import { pruneIngestJournal } from "./effects/ingest/journal";
import { runOverdueDigests } from "./effects/notify/digests";
import { pruneNotifications } from "./effects/notify/retention";
import { runSchedules } from "./effects/schedules/scan";
import { sweepTasks } from "./effects/tasks/sweep";
import { sweepPendingUploads } from "./blobs/presign";
import { sweepImportStaging } from "./apps/archive/staging";
import { undoAbandonedImports } from "./apps/archive/lease";
import { undoAbandonedSeeds } from "./apps/seeding";

const DAY_MS = 24 * 3600 * 1000;

export async function sweepExpired(env: Env, now = Date.now()): Promise<void> {
  const cutoff = new Date(now - DAY_MS).toISOString();
  await env.DB.batch([
    env.DB.prepare("DELETE FROM magic_links WHERE expires_at < ?1").bind(cutoff),
    env.DB.prepare("DELETE FROM claim_codes WHERE expires_at < ?1").bind(cutoff),
    env.DB.prepare("DELETE FROM device_codes WHERE expires_at < ?1").bind(cutoff),
    env.DB.prepare("DELETE FROM app_session_grants WHERE expires_at < ?1").bind(cutoff),
    env.DB.prepare("DELETE FROM app_transfers WHERE status = 'pending' AND expires_at < ?1").bind(cutoff),
    env.DB.prepare("DELETE FROM account_deletions WHERE expires_at < ?1").bind(cutoff),
    env.DB.prepare("DELETE FROM preview_tokens WHERE expires_at < ?1").bind(cutoff),
    env.DB.prepare("DELETE FROM app_invites WHERE expires_at < ?1").bind(cutoff),
    env.DB.prepare("DELETE FROM sessions WHERE expires_at < ?1 OR revoked_at < ?1").bind(cutoff),
    env.DB.prepare("DELETE FROM dev_mail WHERE created_at < ?1").bind(new Date(now - 7 * DAY_MS).toISOString()),
  ]);
  await sweepRateLimits(env, DAY_MS, now);
}

/** Every sweep the cron trigger runs, in order. */
const SWEEPS: ReadonlyArray<{ name: string; run: (env: Env, now: number) => Promise<unknown> }> = [
  { name: "expiries", run: sweepExpired },
  { name: "trash", run: (env, now) => purgeExpiredTrash(env, now) },
  // Deliveries whose next attempt is long overdue (a lost message, a consumer that died
  // mid-attempt) are taken a step; attempts always happen at the real time.
  { name: "webhooks", run: async (env, now) => { await runOverdueDeliveries(env); await pruneJournal(env, now); } },
  // Inbound deliveries past the retention window, then each app's oldest past its cap.
  { name: "ingest", run: (env, now) => pruneIngestJournal(env, now) },
  // Held notifications whose digest message never came (or whose sender died) go now, at the real time.
  { name: "digests", run: async (env, now) => { await runOverdueDigests(env); await pruneNotifications(env, now); } },
  // Each app once per local day from 08:00 in its timezone; `now` picks the day.
  { name: "schedules", run: (env, now) => runSchedules(env, now) },
  // Agent task leases that lapsed come back to the queue (or are dead-lettered), unclaimed tasks expire, old ones go.
  { name: "tasks", run: (env, now) => sweepTasks(env, now) },
  // Presigned uploads nobody confirmed within an hour of their URL lapsing: bytes and rows.
  { name: "attachments", run: (env, now) => sweepPendingUploads(env, now) },
  // Archive entries staged by imports that never finished (the Worker ended mid-request), after a day.
  // Imports the relay died in the middle of: their half-made apps and staging (lease.ts).
  { name: "imports", run: async (env, now) => { await undoAbandonedImports(env, now); await sweepImportStaging(env.BLOBS, now); } },
  // Creates the relay died in the middle of, between their app's insert and its starter rows (seeding.ts).
  { name: "seeds", run: (env, now) => undoAbandonedSeeds(env, now) },
];

/** The names of the sweeps, in the order they run. */
export function sweepNames(): string[] {
  return SWEEPS.map((sweep) => sweep.name);
}

/** Runs every sweep as if at `now`; answers the names of those that ran. */
export async function runSweeps(env: Env, now = Date.now()): Promise<string[]> {
  const ran: string[] = [];
  for (const sweep of SWEEPS) {
    await sweep.run(env, now);
    ran.push(sweep.name);
  }
  return ran;
}
