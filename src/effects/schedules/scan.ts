/**
 * The schedules engine (WIRE §5.5 schedules[], issue 11 item 5): the cron sweep scans each
 * app once per local day, from 08:00 in the app's timezone (UTC when it has none; see
 * local-day.ts for the daylight-saving rule), and `POST /__dev/cron` with `{ now }` runs it
 * as if at that instant. A scan reads every row of each schedule rule's collection through
 * the AppStore as the owner, keeps the rows the rule's `when` holds for, and fires the rule
 * for each row whose `dateField` plus `offsetDays` is the scan's day: a reminder mail or a
 * webhook delivery. Each (rule, row, day) fires at most once, at most
 * `SCHEDULES_MAX_EMAILS_PER_APP_DAY` / `SCHEDULES_MAX_WEBHOOKS_PER_APP_DAY` times per app
 * per day, and nothing at all while `SCHEDULES_ENABLED` is off. An app in migration mode
 * is not scanned until the mode ends (src/apps/migration-mode.ts).
 */
import { errorLogLine } from "../../db/query-errors";
import type { RowView } from "../../../durable-objects/app-store/contract";
import { config } from "../../config";
import { liveManifest } from "../../apps/members";
import { ownerRows } from "../../apps/owner-rows";
import type { ScheduleRule } from "../../manifest";
import { conditionHolds } from "../../rules/match";
import { runDelivery } from "../webhooks/deliveries";
import { ReminderRecipients, sendReminder } from "./email";
import { appsDueForScan, claimFiring, claimScan, finishScan, firingsOn, pruneLedger, type DueScan, type ScheduleActionKind } from "./ledger";
import { addDays, rowDay } from "./local-day";
import { scheduleDelivery } from "./webhook";
import { migrationMode } from "../../apps/migration-mode";

/** Apps scanned per sweep at most; the sweep five minutes later takes the rest. */
const APPS_PER_SWEEP = 100;

/** Runs the schedules sweep as if at `now`; answers how many apps it scanned. */
export async function runSchedules(env: Env, now = Date.now()): Promise<number> {
  if (!config(env).flags.SCHEDULES_ENABLED) return 0;
  let scanned = 0;
  for (const due of await appsDueForScan(env, now, APPS_PER_SWEEP)) {
    // Migration mode defers the day's scan: left unclaimed, a sweep after the mode ends runs it.
    if ((await migrationMode(env, due.app.id, new Date(now))).enabled) continue;
    if (!(await claimScan(env, due.app.id, due.day))) continue;
    try {
      await scanApp(env, due);
      await finishScan(env, due.app.id, due.day);
      scanned += 1;
    } catch (err) {
      // Left unfinished: a sweep after the lease scans the app again, and what fired already does not fire twice.
      console.error(`schedules: the scan of app ${due.app.id} for ${due.day} failed`, errorLogLine(err));
    }
  }
  await pruneLedger(env, now);
  return scanned;
}

/** Whether the rule fires for `row` on the scan's day: its `when` holds and its date plus offset is that day. */
function firesFor(rule: ScheduleRule, row: RowView, rowDate: string, zone: string): boolean {
  const data = row.data;
  if (!conditionHolds(rule.when, { op: "update", collection: rule.collection, before: null, after: data, authorKind: row.author.kind })) return false;
  const value = typeof data === "object" && data !== null && !Array.isArray(data) ? data[rule.dateField] : undefined;
  return rowDay(value, zone) === rowDate;
}

/** Scans one app for its local day: fires each rule for each of its rows due that day. */
async function scanApp(env: Env, { app, zone, day }: DueScan): Promise<void> {
  const manifest = await liveManifest(env, app);
  if (!manifest || manifest.schedules.length === 0) return;
  const limits = config(env).limits;
  const caps: Record<ScheduleActionKind, number> = { email: limits.SCHEDULES_MAX_EMAILS_PER_APP_DAY, webhook: limits.SCHEDULES_MAX_WEBHOOKS_PER_APP_DAY };
  const fired = await firingsOn(env, app.id, day);
  const recipients = new ReminderRecipients(env, app);
  const deliveries: string[] = [];
  const capped = new Set<ScheduleActionKind>();
  for (const rule of manifest.schedules) {
    const kind = rule.action.kind;
    // The rows whose own date, moved by offsetDays, is today: their date is today moved back.
    const rowDate = addDays(day, -rule.offsetDays);
    if (rowDate === null) continue;
    for await (const row of ownerRows(env, app, rule.collection)) {
      if (!firesFor(rule, row, rowDate, zone)) continue;
      if (fired[kind] >= caps[kind]) {
        capped.add(kind);
        break;
      }
      if (!(await claimFiring(env, { appId: app.id, ruleId: rule.id, rowKey: row.key, day, action: kind }, caps[kind]))) continue;
      fired[kind] += 1;
      if (rule.action.kind === "email") {
        await sendReminder(env, app, manifest.app.name, recipients, rule.action, row.data);
      } else {
        deliveries.push((await scheduleDelivery(env, app, manifest.settingsCollection, { ...rule, action: rule.action }, row, day)).id);
      }
    }
  }
  for (const kind of capped) console.warn(`schedules: app ${app.id} reached its ${kind} cap (${caps[kind]}) for ${day}; later rows did not fire`);
  // First attempts go out together; retries follow the webhook schedule through the queue.
  const attempts = await Promise.allSettled(deliveries.map((id) => runDelivery(env, id)));
  for (const attempt of attempts) {
    if (attempt.status === "rejected") console.error(`schedules: a delivery of app ${app.id} could not be attempted`, errorLogLine(attempt.reason));
  }
}
