/**
 * Held notifications going out. Email and push notifications are not sent when their rule
 * fires: each waits, `held`, until its recipient's digest is due — the end of a window
 * (NOTIFY_DIGEST_WINDOW_SECONDS) that the recipient's first held notification opened on
 * that channel — so a burst of writes reaches each person as one mail (one push), and a
 * lone notification goes as itself. A queue message names the digest (app, channel,
 * recipient) and carries nothing else.
 *
 * Sending a digest, safe to repeat for the same key at any time:
 * 1. claim: every held notification of the key becomes `sending` under one digest id in
 *    one statement, so two consumers holding the same message never both send it (a claim
 *    whose sender died is released by the sweep after DIGEST_CLAIM_LEASE_MS);
 * 2. the read check again (recheck.ts): a recipient removed from the app, or who may no
 *    longer read a row, since the rule fired gets nothing, recorded as `suppressed`;
 * 3. the app's hourly cap (NOTIFY_APP_HOURLY_CAP; one digest counts once, a retry not
 *    again): past it the notifications are `capped`;
 * 4. send: a mail through the relay's mailer, or a Web Push to each browser the person
 *    subscribed (a subscription its push service calls gone is deleted), carrying no row
 *    data: the app's name, a line naming the collection and the rule's `link`;
 * 5. record `sent`, or for a send that failed in a way that may pass (the mail transport
 *    threw; the push service answered 5xx or 429, or not at all) hold the items again for
 *    a retry after a growing delay (the digest window, doubling), up to
 *    NOTIFY_SEND_MAX_ATTEMPTS sends; then, or for any other failure, record `failed` with
 *    the reason. A failed send never reaches back to the write that fired it.
 */
import { errorLogLine } from "../../db/query-errors";
import { and, eq, lt, min } from "drizzle-orm";
import { config } from "../../config";
import { db } from "../../db/client";
import { apps } from "../../db/apps-schema";
import { pushSubscriptions } from "../../db/account-schema";
import { notifications } from "../../db/notify-schema";
import { getHuman } from "../../db/humans";
import { countHit } from "../../db/rate-limit";
import { newId } from "../../auth/tokens";
import { liveManifest } from "../../apps/members";
import { appUrl } from "../../apps/urls";
import { recordFlow } from "../../account/usage";
import { mailer } from "../../mail/mailer";
import { notificationMail } from "../../mail/notify-templates";
import type { NotifyDigestMessage } from "../messages";
import { deleteGoneSubscription, sendPush, type PushMessage } from "./push";
import { recheckReaders } from "./recheck";

export type NotificationRow = typeof notifications.$inferSelect;

/** One recipient's notifications on one sending channel of one app. */
export interface DigestKey {
  appId: string;
  channel: "email" | "push";
  recipient: string;
}

/** A due time this close counts as now. */
const DUE_SLACK_MS = 1_000;
/** A digest claimed but never recorded (its sender died) is released after this. */
export const DIGEST_CLAIM_LEASE_MS = 5 * 60_000;
/** Sends of one digest at most: the first and the retries of a send that may pass later. */
export const NOTIFY_SEND_MAX_ATTEMPTS = 4;
/** The queue delays a message by at most 12 hours; a later due time is scheduled again on arrival. */
const MAX_QUEUE_DELAY_SECONDS = 43_200;

/** Asks the queue to run the key's digest in `delayMs`. */
export async function scheduleDigest(env: Env, key: DigestKey, delayMs: number): Promise<void> {
  const message: NotifyDigestMessage = { type: "notify_digest", app_id: key.appId, channel: key.channel, recipient: key.recipient };
  await env.EFFECTS.send(message, { delaySeconds: Math.min(MAX_QUEUE_DELAY_SECONDS, Math.max(0, Math.ceil(delayMs / 1000))) });
}

function keyMatches(key: DigestKey) {
  return and(eq(notifications.appId, key.appId), eq(notifications.channel, key.channel), eq(notifications.recipient, key.recipient));
}

/** How the digest's sends leave the relay: the push service is reached through `sendPush` unless a test hands its own. */
export interface DigestTransport {
  push?: (request: Request) => Promise<Response>;
}

/** `retryable`: the send failed in a way that may pass later (a transport error, a push service's 5xx or 429). */
type Outcome = { status: "sent" } | { status: "failed" | "capped"; reason: string; retryable?: boolean };

/** The push a digest makes: no row data, only the app, the collections and a link. */
export function pushFor(appName: string, items: Array<Pick<NotificationRow, "collection" | "op" | "link">>): PushMessage {
  const collections = [...new Set(items.map((item) => item.collection))];
  const links = new Set(items.map((item) => item.link));
  const body = items.length === 1
    ? `${items[0].op === "create" ? "Something new" : "A change"} in ${collections[0]}`
    : `${items.length} changes in ${collections.join(", ")}`;
  return { title: appName, body, link: links.size === 1 ? items[0].link : null };
}

async function mailItems(env: Env, app: { slug: string; name: string }, items: NotificationRow[]): Promise<Outcome> {
  const first = items[0];
  const to = first.address ?? (first.humanId ? (await getHuman(env, first.humanId))?.email : undefined);
  if (!to) return { status: "failed", reason: "the recipient has no address any more" };
  const base = appUrl(config(env), app.slug);
  const texts = items.map((item) => ({ subject: item.subject, body: item.body, url: item.link ? new URL(item.link, base).href : null }));
  await mailer(env).send(notificationMail(to, { name: app.name, url: base }, texts, first.address === null));
  return { status: "sent" };
}

async function pushItems(env: Env, appName: string, items: NotificationRow[], transport: DigestTransport): Promise<Outcome> {
  const humanId = items[0].humanId;
  const targets = humanId === null ? [] : await db(env).select().from(pushSubscriptions).where(eq(pushSubscriptions.humanId, humanId));
  if (targets.length === 0) return { status: "failed", reason: "no browser of the recipient is subscribed" };
  const message = pushFor(appName, items);
  const outcomes = await Promise.all(targets.map(async (target) => {
    const outcome = await sendPush(env, { endpoint: target.endpoint, keys: { p256dh: target.p256dh, auth: target.auth } }, message, transport.push);
    if (outcome.kind === "gone") await deleteGoneSubscription(env, target.endpoint);
    return outcome;
  }));
  if (outcomes.some((outcome) => outcome.kind === "sent")) return { status: "sent" };
  const failures = outcomes.flatMap((outcome) => (outcome.kind === "failed" ? [outcome] : []));
  if (failures.length === 0) return { status: "failed", reason: "every subscription of the recipient is gone" };
  const passing = failures.find((failure) => failure.retryable);
  return { status: "failed", reason: (passing ?? failures[0]).error, retryable: passing !== undefined };
}

type App = typeof apps.$inferSelect;

async function send(env: Env, app: App, name: string, key: DigestKey, items: NotificationRow[], options: { transport: DigestTransport; now: number; retry: boolean }): Promise<Outcome> {
  const { transport, now } = options;
  const cap = config(env).limits.NOTIFY_APP_HOURLY_CAP;
  if (!options.retry && cap > 0 && (await countHit(env, `notify:${key.appId}`, 3600, now)).hits > cap) {
    return { status: "capped", reason: `the app's hourly notification cap (${cap}) is reached` };
  }
  try {
    const outcome = key.channel === "email" ? await mailItems(env, { slug: app.slug, name }, items) : await pushItems(env, name, items, transport);
    if (outcome.status === "sent") {
      await recordFlow(env, { humanId: app.ownerHumanId, appId: app.id, metric: key.channel === "email" ? "emails" : "push_notifications" });
    }
    return outcome;
  } catch (err) {
    return { status: "failed", reason: err instanceof Error ? err.message : String(err), retryable: true };
  }
}

/** The delay before the retry after `attempt` failed sends: the digest window, doubling. */
export function retryDelayMs(env: Env, attempt: number): number {
  return config(env).notifyDigestWindowMs * 2 ** (attempt - 1);
}

/**
 * What the claimed digest `digestId` comes to: the items the recheck suppressed, then the
 * send of the rest (or a refusal when the app is gone).
 */
async function settle(env: Env, key: DigestKey, digestId: string, items: NotificationRow[], options: { transport: DigestTransport; now: number }): Promise<Outcome | null> {
  const d = db(env);
  const app = (await d.select().from(apps).where(eq(apps.id, key.appId)).limit(1))[0];
  if (!app || (app.status !== "active" && app.status !== "dormant")) return { status: "failed", reason: "the app is no longer live" };
  const manifest = await liveManifest(env, app);
  if (!manifest) return { status: "failed", reason: "the app's manifest no longer compiles" };
  const { keep, suppressed } = await recheckReaders(env, app, manifest, items);
  for (const { id, reason } of suppressed) {
    await d.update(notifications).set({ status: "suppressed", reason, dueAt: null })
      .where(and(eq(notifications.id, id), eq(notifications.digestId, digestId), eq(notifications.status, "sending")));
  }
  if (keep.length === 0) return null;
  const retry = keep.some((item) => item.attempts > 0);
  return send(env, app, manifest.app.name, key, keep, { ...options, retry });
}

/**
 * Sends the key's digest when it is due (and nobody else is sending it); schedules it
 * when it is not yet. Safe to call any number of times for the same key.
 */
export async function runDigest(env: Env, key: DigestKey, options: { now?: number; transport?: DigestTransport } = {}): Promise<void> {
  const now = options.now ?? Date.now();
  const d = db(env);
  const due = (await d.select({ at: min(notifications.dueAt) }).from(notifications).where(and(keyMatches(key), eq(notifications.status, "held"))))[0]?.at ?? null;
  if (due === null) return;
  if (due > now + DUE_SLACK_MS) {
    await scheduleDigest(env, key, due - now);
    return;
  }
  const digestId = newId("ndg_");
  const items = await d.update(notifications).set({ status: "sending", digestId, claimedAt: now })
    .where(and(keyMatches(key), eq(notifications.status, "held"))).returning();
  if (items.length === 0) return;
  items.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  const outcome = await settle(env, key, digestId, items, { transport: options.transport ?? {}, now });
  if (outcome === null) return;
  const claimed = and(eq(notifications.digestId, digestId), eq(notifications.status, "sending"));
  const attempt = Math.max(...items.map((item) => item.attempts)) + 1;
  if (outcome.status === "failed" && outcome.retryable && attempt < NOTIFY_SEND_MAX_ATTEMPTS) {
    const delay = retryDelayMs(env, attempt);
    await d.update(notifications).set({
      status: "held", dueAt: now + delay, digestId: null, claimedAt: null, attempts: attempt, reason: `send ${attempt} failed, trying again: ${outcome.reason}`,
    }).where(claimed);
    try {
      await scheduleDigest(env, key, delay);
    } catch (err) {
      console.error(`notify: the retry of ${key.recipient}'s digest in app ${key.appId} could not be scheduled; the sweep sends it`, errorLogLine(err));
    }
    return;
  }
  await d.update(notifications).set({
    status: outcome.status, reason: outcome.status === "sent" ? null : outcome.reason, dueAt: null,
    sentAt: outcome.status === "sent" ? new Date().toISOString() : null,
  }).where(claimed);
}

/**
 * The sweep's safety net: a digest whose sender died is released, and digests whose due
 * time passed without their message arriving are sent now. Bounded per run.
 */
export async function runOverdueDigests(env: Env, now = Date.now(), batch = 50): Promise<number> {
  const d = db(env);
  await d.update(notifications).set({ status: "held", dueAt: now, digestId: null, claimedAt: null })
    .where(and(eq(notifications.status, "sending"), lt(notifications.claimedAt, now - DIGEST_CLAIM_LEASE_MS)));
  const overdue = await d.selectDistinct({ appId: notifications.appId, channel: notifications.channel, recipient: notifications.recipient })
    .from(notifications).where(and(eq(notifications.status, "held"), lt(notifications.dueAt, now - DUE_SLACK_MS))).limit(batch);
  for (const key of overdue) {
    if (key.channel === "inapp") continue;
    try {
      await runDigest(env, { appId: key.appId, channel: key.channel, recipient: key.recipient }, { now });
    } catch (err) {
      console.error(`notify: the overdue digest of ${key.recipient} in app ${key.appId} could not be sent`, errorLogLine(err));
    }
  }
  return overdue.length;
}
