/**
 * The webhook delivery journal and the life of one delivery (svix's message → attempt
 * model, DESIGN §5.8). A delivery is created once per fired rule (idempotent by its
 * source, so a redelivered queue message never makes a second), holds its exact body,
 * and moves pending → delivered | failed through recorded attempts:
 * - an attempt is claimed first (attempts + 1, and a lease on `next_attempt_at`), so two
 *   consumers holding the same message never both send it, and one that dies mid-attempt
 *   is picked up again by the sweep once the lease runs out;
 * - a 2xx delivers; a 410 Gone ends it; anything else (3xx never followed, 4xx, 5xx, a
 *   refused target, a timeout) is a failed attempt retried on the schedule of
 *   `WEBHOOKS_RETRY_SCHEDULE` with jitter, or later when the receiver's Retry-After says so,
 *   up to `WEBHOOKS_MAX_ATTEMPTS`; the owner is mailed once per rule per window when one
 *   fails for good;
 * - the next attempt is a queue message with a delay (a pointer to the delivery), sent
 *   once per due time (`scheduled_for`).
 */
import { and, eq, lt, sql } from "drizzle-orm";
import { config } from "../../config";
import { db } from "../../db/client";
import { webhookAttempts, webhookDeliveries } from "../../db/effects-schema";
import { newId } from "../../auth/tokens";
import { countHit } from "../../db/rate-limit";
import { outboundFetch } from "../outbound-fetch";
import { connectionHeader } from "../connections";
import { signatureHeader } from "./sign";
import { signingSecrets } from "./secret";
import { mailOwnerOfFailure } from "./failure-mail";
import type { WebhookAttemptMessage } from "../messages";

export type DeliveryRow = typeof webhookDeliveries.$inferSelect;

/** Per attempt (WIRE §6.1 and the issue: 15 s). */
export const ATTEMPT_TIMEOUT_MS = 15_000;
/** How much of a receiver's answer the journal keeps. */
export const RESPONSE_BODY_CAP = 4096;
/** An attempt claimed but never recorded (its consumer died) is taken up again after this. */
export const CLAIM_LEASE_MS = 60_000;
/** The queue delays a message by at most 12 hours; a later attempt is re-scheduled on arrival. */
const MAX_QUEUE_DELAY_SECONDS = 43_200;
/** A due time this close counts as now. */
const DUE_SLACK_MS = 1_000;

export interface NewDelivery {
  appId: string;
  source: string;
  ruleId: string;
  collection: string;
  rowKey: string;
  op: string;
  feedSeq: number | null;
  url: string;
  connection: string | null;
  payload: string;
  replayOfId?: string | null;
  /** Created already failed, never attempted (the target could not be resolved). */
  failedWith?: string;
}

/**
 * Records a delivery (or finds the one this source made already). Past the app's hourly
 * cap it is recorded as failed without an attempt, so the journal says why.
 */
export async function createDelivery(env: Env, input: NewDelivery, now = Date.now()): Promise<DeliveryRow> {
  const existing = await deliveryBySource(env, input.appId, input.source);
  if (existing) return existing;
  const cap = config(env).limits.WEBHOOKS_APP_HOURLY_CAP;
  let failedWith = input.failedWith ?? null;
  if (failedWith === null && cap > 0 && (await countHit(env, `webhooks:${input.appId}`, 3600, now)).hits > cap) {
    failedWith = `the app's hourly webhook cap (${cap}) is reached`;
  }
  const at = new Date(now).toISOString();
  const [created] = await db(env).insert(webhookDeliveries).values({
    id: newId("whd_"), appId: input.appId, source: input.source, ruleId: input.ruleId, collection: input.collection,
    rowKey: input.rowKey, op: input.op, feedSeq: input.feedSeq, url: input.url, connection: input.connection,
    payload: input.payload, status: failedWith === null ? "pending" : "failed", attempts: 0, error: failedWith,
    replayOfId: input.replayOfId ?? null, createdAt: at, nextAttemptAt: failedWith === null ? now : null,
  }).onConflictDoNothing().returning();
  // Nothing returned: another consumer holding the same pointer made it meanwhile.
  return created ?? (await deliveryBySource(env, input.appId, input.source))!;
}

async function deliveryBySource(env: Env, appId: string, source: string): Promise<DeliveryRow | undefined> {
  return (await db(env).select().from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.appId, appId), eq(webhookDeliveries.source, source))).limit(1))[0];
}

export async function deliveryById(env: Env, id: string): Promise<DeliveryRow | undefined> {
  return (await db(env).select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id)).limit(1))[0];
}

/** The body as sent now: the standard envelope gets this delivery's id and the send time; a template's body goes as it is. */
export function bodyForAttempt(delivery: Pick<DeliveryRow, "id" | "payload">, sentAt: string): string {
  try {
    const envelope = JSON.parse(delivery.payload) as Record<string, unknown>;
    if (envelope && typeof envelope === "object" && "delivery_id" in envelope && "sent_at" in envelope && "row" in envelope) {
      return JSON.stringify({ ...envelope, delivery_id: delivery.id, sent_at: sentAt });
    }
  } catch {
    // A template's output is sent byte for byte.
  }
  return delivery.payload;
}

/** The delay before the retry that follows attempt `attempt`, with ±10% jitter. */
export function retryDelayMs(delays: readonly number[], attempt: number, random = Math.random()): number {
  const base = delays[Math.min(attempt - 1, delays.length - 1)] ?? 0;
  return Math.round(base * (0.9 + 0.2 * random));
}

/**
 * Takes one delivery a step: attempts it when due (and nobody else is), schedules the
 * next attempt's message when not. Safe to call any number of times for the same delivery.
 * Given the row just read or written (a fresh delivery), it is not read again: the claim
 * below only succeeds while the row is still as given.
 */
export async function runDelivery(env: Env, deliveryOrId: string | DeliveryRow, now = Date.now()): Promise<void> {
  const delivery = typeof deliveryOrId === "string" ? await deliveryById(env, deliveryOrId) : deliveryOrId;
  if (!delivery || delivery.status !== "pending" || delivery.nextAttemptAt === null) return;
  if (delivery.nextAttemptAt > now + DUE_SLACK_MS) {
    await scheduleNext(env, delivery, now);
    return;
  }
  const claimed = (await db(env).update(webhookDeliveries)
    .set({ attempts: sql`${webhookDeliveries.attempts} + 1`, lastAttemptAt: new Date(now).toISOString(), nextAttemptAt: now + CLAIM_LEASE_MS, scheduledFor: null })
    .where(and(eq(webhookDeliveries.id, delivery.id), eq(webhookDeliveries.status, "pending"), eq(webhookDeliveries.attempts, delivery.attempts)))
    .returning())[0];
  if (!claimed) return;
  await attempt(env, claimed, now);
}

async function attempt(env: Env, delivery: DeliveryRow, startedAt: number): Promise<void> {
  const cfg = config(env);
  const sentAt = new Date(startedAt).toISOString();
  const body = bodyForAttempt(delivery, sentAt);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": "Service-Webhooks/1",
    "x-service-signature": await signatureHeader(await signingSecrets(env, delivery.appId, startedAt), Math.floor(startedAt / 1000), body),
    "x-service-event": delivery.op,
    "x-service-collection": delivery.collection,
    "x-service-delivery": delivery.id,
  };
  const auth = delivery.connection === null ? null : await connectionHeader(env, delivery.appId, delivery.connection, delivery.url);
  const result = auth !== null && !auth.ok
    ? { status: null, body: "", bodyTruncated: false, error: auth.error, durationMs: 0, retryAfterSeconds: null }
    : await outboundFetch(delivery.url, {
      method: "POST", headers: auth?.ok ? { ...headers, [auth.name.toLowerCase()]: auth.value } : headers, body,
      timeoutMs: ATTEMPT_TIMEOUT_MS, maxResponseBytes: RESPONSE_BODY_CAP,
    }, { development: cfg.development });
  const finishedAt = Date.now();
  const delivered = result.status !== null && result.status >= 200 && result.status < 300;
  const error = delivered ? null : result.error ?? `the receiver answered ${result.status}`;
  await db(env).insert(webhookAttempts).values({
    deliveryId: delivery.id, attempt: delivery.attempts, at: sentAt, responseStatus: result.status, error, durationMs: result.durationMs,
  }).onConflictDoNothing();
  const outcome = { responseStatus: result.status, responseBody: result.body.slice(0, RESPONSE_BODY_CAP), error };
  if (delivered) {
    await settleAttempt(env, delivery, { ...outcome, status: "delivered", deliveredAt: new Date(finishedAt).toISOString(), nextAttemptAt: null });
    return;
  }
  const gone = result.status === 410;
  if (gone || delivery.attempts >= cfg.limits.WEBHOOKS_MAX_ATTEMPTS) {
    await settleAttempt(env, delivery, { ...outcome, status: "failed", nextAttemptAt: null });
    await mailOwnerOfFailure(env, delivery, gone ? "the receiver answered 410 Gone" : `${delivery.attempts} attempts failed`, finishedAt);
    return;
  }
  const wait = Math.max(retryDelayMs(cfg.webhookRetryDelaysMs, delivery.attempts), (result.retryAfterSeconds ?? 0) * 1000);
  const next = await settleAttempt(env, delivery, { ...outcome, status: "pending", nextAttemptAt: finishedAt + wait });
  if (next) await scheduleNext(env, next, finishedAt);
}

/** Records an attempt's outcome, unless the delivery moved on meanwhile (answers the row as written, or undefined). */
async function settleAttempt(env: Env, delivery: DeliveryRow, outcome: Partial<DeliveryRow>): Promise<DeliveryRow | undefined> {
  return (await db(env).update(webhookDeliveries).set(outcome)
    .where(and(eq(webhookDeliveries.id, delivery.id), eq(webhookDeliveries.attempts, delivery.attempts), eq(webhookDeliveries.status, "pending")))
    .returning())[0];
}

/** Sends the message for the next attempt, once per due time. */
async function scheduleNext(env: Env, delivery: DeliveryRow, now: number): Promise<void> {
  const due = delivery.nextAttemptAt;
  if (due === null || delivery.scheduledFor === due) return;
  const delaySeconds = Math.min(MAX_QUEUE_DELAY_SECONDS, Math.max(0, Math.ceil((due - now) / 1000)));
  const message: WebhookAttemptMessage = { type: "webhook_attempt", delivery_id: delivery.id };
  await env.EFFECTS.send(message, { delaySeconds });
  await db(env).update(webhookDeliveries).set({ scheduledFor: due })
    .where(and(eq(webhookDeliveries.id, delivery.id), eq(webhookDeliveries.nextAttemptAt, due)));
}

/**
 * The sweep's safety net: pending deliveries whose due time passed well ago (a message
 * lost, a consumer that died mid-attempt) are taken a step now. Bounded per run.
 */
export async function runOverdueDeliveries(env: Env, now = Date.now(), batch = 50): Promise<number> {
  const overdue = await db(env).select({ id: webhookDeliveries.id }).from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.status, "pending"), lt(webhookDeliveries.nextAttemptAt, now - CLAIM_LEASE_MS)))
    .limit(batch);
  for (const { id } of overdue) {
    try {
      await runDelivery(env, id, now);
    } catch (err) {
      console.error(`webhooks: overdue delivery ${id} could not be run`, err);
    }
  }
  return overdue.length;
}

