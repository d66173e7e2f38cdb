/**
 * The webhook delivery journal and the life of one delivery (svix's message → attempt
 * model, DESIGN §5.8). A delivery is created once per fired rule (record.ts: idempotent
 * by its source, so a redelivered queue message never makes a second), holds its exact
 * body, and moves pending → delivered | failed through recorded attempts:
 * - an attempt is claimed first (attempts + 1, and a lease on `next_attempt_at`), so two
 *   consumers holding the same message never both send it, and one that dies mid-attempt
 *   is picked up again by the sweep once the lease runs out;
 * - a 2xx delivers; a 410 Gone ends it; anything else (3xx never followed, 4xx, 5xx, a
 *   refused target, a timeout) is a failed attempt retried on the schedule of
 *   `WEBHOOKS_RETRY_SCHEDULE` with jitter, or later when the receiver's Retry-After says so,
 *   up to `WEBHOOKS_MAX_ATTEMPTS`; the owner is mailed once per rule per window when one
 *   fails for good;
 * - the next attempt is a queue message with a delay (a pointer to the delivery), sent
 *   once per due time (`scheduled_for`);
 * - the attempts of one run (a consumer batch) share their secret reads, a bound on the
 *   requests in flight, and the writes of their outcomes (each attempt's row and its
 *   delivery's new state in one transaction, many attempts' in one batch).
 */
import { errorLogLine } from "../../db/query-errors";
import { and, eq, inArray, lt, sql } from "drizzle-orm";
import { config } from "../../config";
import { db, type Db } from "../../db/client";
import { webhookAttempts, webhookDeliveries } from "../../db/effects-schema";
import { groupedBatch, type GroupedBatch } from "../../db/grouped-batch";
import { limiter, type Limiter } from "../../bounded";
import { outboundFetch, type OutboundResult } from "../outbound-fetch";
import { connectionHeader } from "../connections";
import { signatureHeader } from "./sign";
import { liveSecrets, secretRowOf, type SecretRow } from "./secret";
import { mailOwnerOfFailure } from "./failure-mail";
import type { WebhookAttemptMessage } from "../messages";

export type DeliveryRow = typeof webhookDeliveries.$inferSelect;

/** Per attempt (WIRE §6.1 and the issue: 15 s). */
export const ATTEMPT_TIMEOUT_MS = 15_000;
/** How much of a receiver's answer the journal keeps. */
export const RESPONSE_BODY_CAP = 4096;
/** An attempt claimed but never recorded (its consumer died) is taken up again after this. */
export const CLAIM_LEASE_MS = 60_000;
/**
 * Attempts of one consumer batch (at most 25 messages) sent at once: 25 receivers that
 * all time out take three rounds of 15 s, inside the claim lease.
 */
export const SENDS_IN_FLIGHT = 10;
/** The queue delays a message by at most 12 hours; a later attempt is re-scheduled on arrival. */
const MAX_QUEUE_DELAY_SECONDS = 43_200;
/** A due time this close counts as now. */
const DUE_SLACK_MS = 1_000;
/** Deliveries read per statement (D1 binds at most 100 values to one). */
const IDS_PER_READ = 90;

/**
 * What the attempts of one run share (one consumer batch, one sweep): each app's signing
 * secrets read once, the outcomes written together (a group commit, grouped-batch.ts),
 * and a bound on the requests in flight.
 */
export interface AttemptRun {
  secrets(appId: string, now: number): Promise<string[]>;
  /** Hands the run an app's secret row read already (the consumer's batch of reads), unless it has one. */
  knownSecrets(appId: string, row: SecretRow | undefined): void;
  write: GroupedBatch;
  send: Limiter;
}

export function attemptRun(env: Env): AttemptRun {
  const rows = new Map<string, Promise<SecretRow | undefined>>();
  return {
    knownSecrets(appId, row) {
      if (!rows.has(appId)) rows.set(appId, Promise.resolve(row));
    },
    async secrets(appId, now) {
      let row = rows.get(appId);
      if (!row) {
        row = secretRowOf(env, appId);
        rows.set(appId, row);
        // A read that failed is not kept: the next attempt reads again.
        row.catch(() => rows.delete(appId));
      }
      return liveSecrets(await row, now);
    },
    write: groupedBatch(db(env)),
    send: limiter(SENDS_IN_FLIGHT),
  };
}

/** The claim of a delivery's next attempt (attempts + 1, and a lease), taken only while the row is still as given. */
export function claimStatement(d: Db, delivery: Pick<DeliveryRow, "id" | "attempts">, now: number) {
  return d.update(webhookDeliveries)
    .set({ attempts: sql`${webhookDeliveries.attempts} + 1`, lastAttemptAt: new Date(now).toISOString(), nextAttemptAt: now + CLAIM_LEASE_MS, scheduledFor: null })
    .where(and(eq(webhookDeliveries.id, delivery.id), eq(webhookDeliveries.status, "pending"), eq(webhookDeliveries.attempts, delivery.attempts)))
    .returning();
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
export async function runDelivery(env: Env, deliveryOrId: string | DeliveryRow, now = Date.now(), run = attemptRun(env)): Promise<void> {
  await Promise.all(await runDeliveries(env, [deliveryOrId], now, run));
}

/**
 * Takes many deliveries a step as runDelivery takes one, with one read of those given by
 * id and one batch of claims for all that are due; answers each one's step (in order),
 * which settles once its attempt is recorded or its next message sent. Throws, taking
 * none a step, when the read or the claims fail.
 */
export async function runDeliveries(env: Env, deliveriesOrIds: ReadonlyArray<string | DeliveryRow>, now = Date.now(), run = attemptRun(env)): Promise<Array<Promise<void>>> {
  const ids = deliveriesOrIds.filter((item): item is string => typeof item === "string");
  const read = ids.length > 0 ? await deliveriesById(env, ids) : new Map<string, DeliveryRow>();
  const rows = deliveriesOrIds.map((item) => (typeof item === "string" ? read.get(item) : item));
  const live = rows.filter((row): row is DeliveryRow => row !== undefined && row.status === "pending" && row.nextAttemptAt !== null);
  const due = [...new Map(live.filter((row) => row.nextAttemptAt! <= now + DUE_SLACK_MS).map((row) => [row.id, row])).values()];
  const d = db(env);
  const claims = due.length > 0 ? await d.batch(due.map((row) => claimStatement(d, row, now)) as unknown as [ReturnType<typeof claimStatement>]) : [];
  const steps = new Map<string, Promise<void>>();
  for (const [claimed] of claims) if (claimed) steps.set(claimed.id, attemptClaimed(env, claimed, run));
  return rows.map((row) => {
    if (!row || !live.includes(row)) return Promise.resolve();
    if (row.nextAttemptAt! > now + DUE_SLACK_MS) return scheduleNext(env, row, now);
    // Claimed by someone else (or already moved on): nothing to do here.
    return steps.get(row.id) ?? Promise.resolve();
  });
}

async function deliveriesById(env: Env, ids: readonly string[]): Promise<Map<string, DeliveryRow>> {
  const unique = [...new Set(ids)];
  const found = new Map<string, DeliveryRow>();
  for (let start = 0; start < unique.length; start += IDS_PER_READ) {
    const rows = await db(env).select().from(webhookDeliveries).where(inArray(webhookDeliveries.id, unique.slice(start, start + IDS_PER_READ)));
    for (const row of rows) found.set(row.id, row);
  }
  return found;
}

/** Sends the attempt a claimed delivery holds (waiting for a place among the run's sends), then records its outcome. */
export async function attemptClaimed(env: Env, delivery: DeliveryRow, run: AttemptRun): Promise<void> {
  const { result, sentAt } = await run.send(() => send(env, delivery, run));
  await recordOutcome(env, delivery, result, sentAt, run);
}

type AttemptResult = Pick<OutboundResult, "status" | "body" | "error" | "durationMs" | "retryAfterSeconds">;

async function send(env: Env, delivery: DeliveryRow, run: AttemptRun): Promise<{ result: AttemptResult; sentAt: string }> {
  const startedAt = Date.now();
  const sentAt = new Date(startedAt).toISOString();
  const body = bodyForAttempt(delivery, sentAt);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": "Service-Webhooks/1",
    "x-service-signature": await signatureHeader(await run.secrets(delivery.appId, startedAt), Math.floor(startedAt / 1000), body),
    "x-service-event": delivery.op,
    "x-service-collection": delivery.collection,
    "x-service-delivery": delivery.id,
  };
  const auth = delivery.connection === null ? null : await connectionHeader(env, delivery.appId, delivery.connection, delivery.url);
  const result = auth !== null && !auth.ok
    ? { status: null, body: "", error: auth.error, durationMs: 0, retryAfterSeconds: null }
    : await outboundFetch(delivery.url, {
      method: "POST", headers: auth?.ok ? { ...headers, [auth.name.toLowerCase()]: auth.value } : headers, body,
      timeoutMs: ATTEMPT_TIMEOUT_MS, maxResponseBytes: RESPONSE_BODY_CAP,
    }, { development: config(env).development });
  return { result, sentAt };
}

/** Journals the attempt and its delivery's new state in one write (shared with the run's other outcomes), then what follows. */
async function recordOutcome(env: Env, delivery: DeliveryRow, result: AttemptResult, sentAt: string, run: AttemptRun): Promise<void> {
  const cfg = config(env);
  const finishedAt = Date.now();
  const delivered = result.status !== null && result.status >= 200 && result.status < 300;
  const gone = result.status === 410;
  const final = delivered || gone || delivery.attempts >= cfg.limits.WEBHOOKS_MAX_ATTEMPTS;
  const error = delivered ? null : result.error ?? `the receiver answered ${result.status}`;
  const wait = Math.max(retryDelayMs(cfg.webhookRetryDelaysMs, delivery.attempts), (result.retryAfterSeconds ?? 0) * 1000);
  const outcome: Partial<DeliveryRow> = {
    responseStatus: result.status, responseBody: result.body.slice(0, RESPONSE_BODY_CAP), error,
    ...(delivered ? { status: "delivered", deliveredAt: new Date(finishedAt).toISOString(), nextAttemptAt: null }
      : final ? { status: "failed", nextAttemptAt: null } : { status: "pending", nextAttemptAt: finishedAt + wait }),
  };
  const d = db(env);
  const [, settled] = await run.write([
    d.insert(webhookAttempts).values({
      deliveryId: delivery.id, attempt: delivery.attempts, at: sentAt, responseStatus: result.status, error, durationMs: result.durationMs,
    }).onConflictDoNothing(),
    // Unless the delivery moved on meanwhile: then nothing comes back.
    d.update(webhookDeliveries).set(outcome)
      .where(and(eq(webhookDeliveries.id, delivery.id), eq(webhookDeliveries.attempts, delivery.attempts), eq(webhookDeliveries.status, "pending")))
      .returning(),
  ]) as [unknown, DeliveryRow[]];
  if (delivered) return;
  if (final) {
    await mailOwnerOfFailure(env, delivery, gone ? "the receiver answered 410 Gone" : `${delivery.attempts} attempts failed`, finishedAt);
    return;
  }
  if (settled[0]) await scheduleNext(env, settled[0], finishedAt);
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
  const run = attemptRun(env);
  for (const { id } of overdue) {
    try {
      await runDelivery(env, id, now, run);
    } catch (err) {
      console.error(`webhooks: overdue delivery ${id} could not be run`, errorLogLine(err));
    }
  }
  return overdue.length;
}

