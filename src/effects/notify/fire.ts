/**
 * A notify rule fired by a row change becomes notifications (WIRE §5.5 notify[]): the
 * rule is looked up in the app's live manifest at fire time (a rule gone since the write
 * notifies nobody), its audience resolved (recipients.ts), its subject and body rendered
 * against the row (WIRE §5.4), and one row per recipient and channel recorded in D1 in
 * one batch — once per outbox entry, however often its pointer arrives:
 * - a person who may not read the row, or is no longer in the app: `suppressed`;
 * - a channel the person muted for this app: `muted`;
 * - `inapp`: in the person's inbox at once (`sent`);
 * - `email` and `push`: `held` for the recipient's digest, which a queue message sends
 *   when the window the first held one opened ends (digests.ts); `push` only for people
 *   with a subscribed browser;
 * - the submitter (by email only): at most once per row per rule.
 * Channels whose operator gate is off (NOTIFY_INAPP_ENABLED, NOTIFY_PUSH_ENABLED) and the
 * submitter without NOTIFY_EXTERNAL_ENABLED are left out at fire time too.
 */
import { errorLogLine } from "../../db/query-errors";
import { and, eq, inArray, sql } from "drizzle-orm";
import type { SQLiteInsertValue } from "drizzle-orm/sqlite-core";
import { config } from "../../config";
import { db } from "../../db/client";
import { apps } from "../../db/apps-schema";
import { pushSubscriptions } from "../../db/account-schema";
import { notifications, notifyMutes } from "../../db/notify-schema";
import type { AppRow } from "../../db/apps";
import { newId } from "../../auth/tokens";
import { liveManifest } from "../../apps/members";
import { appStore } from "../../apps/store";
import type { NotifyChannel } from "../../manifest";
import type { Author } from "../../permissions";
import { renderTextTemplate } from "../../rules/templates";
import type { EffectChange } from "../../../durable-objects/app-store/contract";
import { audienceOf } from "./recipients";
import { scheduleDigest } from "./digests";

/** A subject is one line of at most this many characters; a body at most BODY_MAX. */
export const SUBJECT_MAX = 200;
export const BODY_MAX = 10_000;

/** A row to insert; `dueAt` may be the SQL that finds the recipient's open window. */
type NewNotification = SQLiteInsertValue<typeof notifications>;

/**
 * Who created the row: what the store recorded in the change. An entry recorded before the
 * store did so (an update still in an outbox from an older relay) falls back to the
 * author of a create, or the store's row as its owner reads it (null when unreadable or gone).
 */
async function rowCreator(env: Env, app: AppRow, change: EffectChange): Promise<Author | null> {
  if (change.creator) return change.creator;
  if (change.op === "create") return change.author;
  if (app.currentVersion === null) return null;
  const answer = await appStore(env, app.id).getRow(
    { appId: app.id, version: app.currentVersion, principal: { kind: "owner", humanId: app.ownerHumanId } }, change.collection, change.key,
  );
  return answer.ok ? answer.value.creator : null;
}

async function alreadyRecorded(env: Env, appId: string, source: string): Promise<boolean> {
  const hit = await db(env).select({ id: notifications.id }).from(notifications)
    .where(and(eq(notifications.appId, appId), eq(notifications.source, source))).limit(1);
  return hit.length > 0;
}

/** `<human id>:<channel>` for every channel someone muted in this app. */
async function mutesOf(env: Env, appId: string): Promise<Set<string>> {
  const rows = await db(env).select().from(notifyMutes).where(eq(notifyMutes.appId, appId));
  return new Set(rows.map((row) => `${row.humanId}:${row.channel}`));
}

/** The people among `humanIds` with at least one subscribed browser. */
async function subscribedAmong(env: Env, humanIds: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < humanIds.length; i += 90) {
    const rows = await db(env).selectDistinct({ humanId: pushSubscriptions.humanId }).from(pushSubscriptions)
      .where(inArray(pushSubscriptions.humanId, humanIds.slice(i, i + 90)));
    for (const row of rows) found.add(row.humanId);
  }
  return found;
}

/** The channels of the rule the operator has on now (email needs no gate). */
function liveChannels(env: Env, channels: NotifyChannel[]): NotifyChannel[] {
  const flags = config(env).flags;
  return channels.filter((channel) => channel === "email"
    || (channel === "inapp" && flags.NOTIFY_INAPP_ENABLED) || (channel === "push" && flags.NOTIFY_PUSH_ENABLED));
}

/**
 * Records the notifications one outbox entry asks for; answers how many were recorded now
 * (0 when the writer kept notify quiet, the app or the rule is gone, nobody is reached,
 * or this entry was recorded before).
 */
export async function recordNotifications(env: Env, appId: string, source: string, ruleId: string, change: EffectChange, now = Date.now()): Promise<number> {
  if (change.suppressed) return 0;
  const app = (await db(env).select().from(apps).where(and(eq(apps.id, appId), inArray(apps.status, ["active", "dormant"]))).limit(1))[0];
  if (!app) return 0;
  const manifest = await liveManifest(env, app);
  const rule = manifest?.notify.find((candidate) => candidate.id === ruleId);
  if (!manifest || !rule || await alreadyRecorded(env, appId, source)) return 0;

  const cfg = config(env);
  const channels = liveChannels(env, rule.channels);
  const audience = await audienceOf(env, app, manifest, rule, change, await rowCreator(env, app, change), cfg.flags.NOTIFY_EXTERNAL_ENABLED);
  const muted = await mutesOf(env, appId);
  const subscribed = channels.includes("push") ? await subscribedAmong(env, audience.people.map((person) => person.humanId)) : new Set<string>();
  const at = new Date(now).toISOString();
  const windowEnd = now + cfg.notifyDigestWindowMs;
  const base = {
    appId, source, ruleId, collection: change.collection, rowKey: change.key, op: change.op, link: rule.link, createdAt: at,
    subject: renderTextTemplate(rule.subject, change.data).replace(/[\r\n]+/g, " ").trim().slice(0, SUBJECT_MAX),
    body: renderTextTemplate(rule.body, change.data).slice(0, BODY_MAX),
  };
  // A held notification joins its recipient's open window, or opens one.
  const held = (channel: NotifyChannel, recipient: string) => ({
    status: "held" as const,
    dueAt: sql`coalesce((SELECT min(due_at) FROM notifications WHERE app_id = ${appId} AND channel = ${channel} AND recipient = ${recipient} AND status = 'held'), ${windowEnd})`,
  });

  const rows: NewNotification[] = [];
  for (const person of audience.people) {
    const recipient = `human:${person.humanId}`;
    for (const channel of channels) {
      const row = { ...base, id: newId("ntf_"), channel, recipient, humanId: person.humanId };
      if (person.principal === null) rows.push({ ...row, status: "suppressed", reason: "not the owner or a member of the app" });
      else if (!person.canRead) rows.push({ ...row, status: "suppressed", reason: "may not read the row" });
      else if (muted.has(`${person.humanId}:${channel}`)) rows.push({ ...row, status: "muted" });
      else if (channel === "inapp") rows.push({ ...row, status: "sent", sentAt: at });
      else if (channel === "email" || subscribed.has(person.humanId)) rows.push({ ...row, ...held(channel, recipient) });
    }
  }
  if (audience.submitter !== null && channels.includes("email")) {
    const recipient = `address:${audience.submitter}`;
    rows.push({ ...base, id: newId("ntf_"), channel: "email", recipient, address: audience.submitter, ...held("email", recipient) });
  }
  if (rows.length === 0) return 0;

  const d = db(env);
  const inserts = rows.map((row) => d.insert(notifications).values(row).onConflictDoNothing()
    .returning({ channel: notifications.channel, recipient: notifications.recipient, status: notifications.status, dueAt: notifications.dueAt }));
  const recorded = (await d.batch(inserts as [typeof inserts[number], ...typeof inserts])).flat();
  for (const item of recorded) {
    if (item.status !== "held" || item.dueAt === null || item.channel === "inapp") continue;
    // This one opened a window (or joined one already overdue): its digest must be asked for.
    if (item.dueAt !== windowEnd && item.dueAt > now) continue;
    try {
      await scheduleDigest(env, { appId, channel: item.channel, recipient: item.recipient }, item.dueAt - now);
    } catch (err) {
      // The notifications are held; the sweep sends digests whose message never came.
      console.error(`notify: the digest of ${item.recipient} in app ${appId} could not be scheduled`, errorLogLine(err));
    }
  }
  return recorded.length;
}
