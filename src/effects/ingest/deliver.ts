/**
 * One body through one hook's rule, the same for a live delivery, a backfilled body and a
 * replay (WIRE §6.3, spec B "Inbound hook outcomes"): the dedupe value is claimed in the
 * journal first (a second delivery with a value an accepted or in-flight one holds is
 * `dropped_duplicate`), the body is mapped and written through the AppStore contract
 * stamped `hook`, and the journal entry ends `accepted` or `failed` (a failure releases
 * its dedupe value, so a corrective retry is a real attempt).
 *
 * Nothing is lost when the relay dies mid-delivery: a claim left `processing` is taken
 * over at once by the next delivery with its value (live, backfilled or replayed), and the
 * row is written at the claimed delivery's id, so a write that did land is found, not
 * repeated. Only an accepted delivery makes a later one a duplicate: a sender re-sending
 * right after a crash must not be told that a body the dead relay never wrote was taken.
 * If the holder is alive after all, both writes land on the one row at its id and both
 * end the one journal entry `accepted` (docs/decisions/2026-11-26-ingest-claims-taken-over-at-once.md).
 */
import { errorLogLine } from "../../db/query-errors";
import { and, eq, ne } from "drizzle-orm";
import { db } from "../../db/client";
import { ingestDeliveries } from "../../db/ingest-schema";
import { newId } from "../../auth/tokens";
import { appStore } from "../../apps/store";
import type { JsonValue } from "../../manifest";
import type { EffectKind } from "../../rules/match";
import type { Failure } from "../../../durable-objects/app-store/contract";
import { countLiveDelivery, type LiveHook } from "./hooks";
import { recordFlowStatement } from "../../account/usage";
import { dedupeKeyText, dedupeValue, ifMatchOf, mapBody } from "./mapping";

export type DeliveryStatus = "accepted" | "dropped_duplicate" | "failed";

export interface DeliveryOutcome {
  deliveryId: string;
  status: DeliveryStatus;
  rowKey: string | null;
  error: Failure | null;
}

export interface DeliveryInput {
  app: { id: string; version: number };
  hook: LiveHook;
  source: "live" | "backfill" | "replay";
  /** The body as received: what the journal keeps and a replay sends again. */
  rawBody: string;
  /** The parsed body, or undefined when it is not JSON (the delivery then fails). */
  body: JsonValue | undefined;
  /** The request's headers for a `header:` dedupeKey; null in a backfill or replay. */
  headers: Headers | null;
  /** The owner whose `ingest_deliveries` usage counts this delivery, with its journal write; absent: not counted here. */
  usageOf?: string;
  /** A replay bypasses dedupe. */
  dedupe: boolean;
  replayOfId?: string;
  suppress?: EffectKind[];
  /** Why the body is refused before anything else (a backfilled body over INGEST_MAX_BODY_BYTES): journaled failed. */
  refusal?: Failure;
  /**
   * Where an accepted delivery's journal entry may be written after the answer (a live
   * delivery's waitUntil). Only an accepted one: a failure must free its dedupe value
   * before the sender hears of it. A claim whose entry never gets written stays
   * `processing` and is taken over later, finding the row already written at its key.
   */
  defer?: (work: Promise<unknown>) => void;
}

type Claim = { id: string; claimed: boolean };

/**
 * Claims the dedupe value for a new delivery, or takes over a `processing` claim of it;
 * null when an accepted delivery holds it, or another delivery took the claim over first
 * (the caller journals a duplicate).
 */
async function claim(env: Env, input: DeliveryInput, value: string, now: number): Promise<Claim | null> {
  const d = db(env);
  const id = newId("ind_");
  const insert = d.insert(ingestDeliveries).values({
    id, appId: input.app.id, hookId: input.hook.id, hookName: input.hook.name, source: input.source, status: "processing",
    dedupeKey: dedupeKeyText(input.hook.rule), dedupeValue: value, payload: input.rawBody, replayOfId: input.replayOfId ?? null,
    createdAt: new Date(now).toISOString(), claimedAt: now,
  }).onConflictDoNothing().returning({ id: ingestDeliveries.id });
  const [inserted] = input.source === "live" ? await d.batch([insert, countLiveDelivery(d, input.app.id, id, now)]) : [await insert];
  if (inserted.length) return { id, claimed: true };
  const holder = (await d.select().from(ingestDeliveries).where(and(eq(ingestDeliveries.hookId, input.hook.id), eq(ingestDeliveries.dedupeValue, value))).limit(1))[0];
  if (!holder || holder.status !== "processing") return null;
  const takeOver = d.update(ingestDeliveries).set({ claimedAt: now, payload: input.rawBody, source: input.source })
    .where(and(eq(ingestDeliveries.id, holder.id), eq(ingestDeliveries.status, "processing"), eq(ingestDeliveries.claimedAt, holder.claimedAt)))
    .returning({ id: ingestDeliveries.id });
  // A live delivery that takes a claim over is a live arrival like one that inserts it:
  // it counts against the hourly brake when its takeover is the one that held.
  const [taken] = input.source === "live"
    ? await d.batch([takeOver, countLiveDelivery(d, input.app.id, holder.id, now, and(eq(ingestDeliveries.claimedAt, now), eq(ingestDeliveries.source, "live")))])
    : [await takeOver];
  return taken.length ? { id: holder.id, claimed: true } : null;
}

/**
 * Records how the delivery ended: the claimed entry updated (a failure frees its value), or
 * a new entry. When a claim was taken over while its holder was still alive, both end the
 * one entry: a failure never overwrites an acceptance, whose row is written.
 */
async function finish(env: Env, input: DeliveryInput, entry: Claim, outcome: DeliveryOutcome, value: string | null, now: number): Promise<DeliveryOutcome> {
  const settled = {
    status: outcome.status, rowKey: outcome.rowKey, errorCode: outcome.error?.code ?? null, errorMessage: outcome.error?.message ?? null,
    dedupeValue: outcome.status === "accepted" ? value : null,
  };
  const d = db(env);
  // The owner's usage counter goes in the same batch as the journal write: one D1 write per delivery.
  const usage = input.usageOf ? [recordFlowStatement(d, { humanId: input.usageOf, appId: input.app.id, metric: "ingest_deliveries", at: new Date(now) })] : [];
  if (entry.claimed) {
    const unlessAccepted = outcome.status === "accepted" ? undefined : ne(ingestDeliveries.status, "accepted");
    await d.batch([d.update(ingestDeliveries).set(settled).where(and(eq(ingestDeliveries.id, entry.id), unlessAccepted)), ...usage]);
  } else {
    const insert = d.insert(ingestDeliveries).values({
      id: entry.id, appId: input.app.id, hookId: input.hook.id, hookName: input.hook.name, source: input.source, dedupeKey: dedupeKeyText(input.hook.rule),
      payload: input.rawBody, replayOfId: input.replayOfId ?? null, createdAt: new Date(now).toISOString(), claimedAt: now, ...settled,
    });
    const counted = input.source === "live" ? [countLiveDelivery(d, input.app.id, entry.id, now)] : [];
    await d.batch([insert, ...counted, ...usage]);
  }
  return outcome;
}

function failure(code: Failure["code"], message: string): Failure {
  return { code, message };
}

/** Runs one body through the hook's current rule and journals the outcome. */
export async function deliver(env: Env, input: DeliveryInput, now = Date.now()): Promise<DeliveryOutcome> {
  const { rule } = input.hook;
  const value = input.dedupe && input.body !== undefined ? dedupeValue(rule, input.body, input.headers) : null;
  let entry: Claim = { id: newId("ind_"), claimed: false };
  if (input.refusal) return finish(env, input, entry, { deliveryId: entry.id, status: "failed", rowKey: null, error: input.refusal }, null, now);
  if (value !== null) {
    const claimed = await claim(env, input, value, now);
    if (!claimed) return finish(env, input, entry, { deliveryId: entry.id, status: "dropped_duplicate", rowKey: null, error: null }, null, now);
    entry = claimed;
  }
  const failed = (error: Failure) => finish(env, input, entry, { deliveryId: entry.id, status: "failed", rowKey: null, error }, value, now);
  if (input.body === undefined) return failed(failure("invalid_request", "The body is not valid JSON."));
  const ifMatch = ifMatchOf(rule, input.body);
  if (!ifMatch.ok) return failed(failure("invalid_request", "if_match must be a non-negative integer."));
  const data = mapBody(rule, input.body, new Date(now).toISOString());
  const written = await appStore(env, input.app.id).hookWrite(
    { appId: input.app.id, version: input.app.version, hook: rule.name, ...(input.suppress ? { suppress: input.suppress } : {}) },
    rule.collection, { key: entry.id, data, upsertOn: rule.upsertOn, ...(ifMatch.value !== undefined ? { ifMatch: ifMatch.value } : {}) },
  );
  if (!written.ok) return failed(written.error);
  const accepted: DeliveryOutcome = { deliveryId: entry.id, status: "accepted", rowKey: written.value.row.key, error: null };
  if (!input.defer) return finish(env, input, entry, accepted, value, now);
  input.defer(finish(env, input, entry, accepted, value, now).catch((err) => console.error(`ingest: journal entry ${entry.id} not written`, errorLogLine(err))));
  return accepted;
}
