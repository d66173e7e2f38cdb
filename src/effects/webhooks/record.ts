/**
 * Recording webhook deliveries (deliveries.ts takes them on from there): one, or all that
 * one app's entries of a consumer batch fire, in the same few D1 round trips whatever
 * their number: one read of those recorded already (a redelivered pointer never makes a
 * second, nor counts against the cap again), one count of the new ones against the app's
 * hourly cap, and one batch that inserts them and, when asked, claims the first attempt
 * of each in the same transaction (so the caller sends it without another write first).
 * A delivery past the cap is recorded as failed without an attempt, so the journal says why.
 */
import { and, eq, inArray } from "drizzle-orm";
import { config } from "../../config";
import { db } from "../../db/client";
import { webhookDeliveries } from "../../db/effects-schema";
import { newId } from "../../auth/tokens";
import { countHit } from "../../db/rate-limit";
import { claimStatement, type DeliveryRow } from "./deliveries";

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

export interface RecordedDelivery {
  delivery: DeliveryRow;
  /** Made by this call and its first attempt claimed for the caller, who sends it now. */
  claimed: boolean;
}

/** Sources looked up per statement (D1 binds at most 100 values to one). */
const SOURCES_PER_READ = 90;
const HOUR_SECONDS = 3600;

/** Records a delivery (or finds the one this source made already). */
export async function createDelivery(env: Env, input: NewDelivery, now = Date.now()): Promise<DeliveryRow> {
  return (await createDeliveries(env, input.appId, [input], { claim: false }, now))[0].delivery;
}

/**
 * Records the deliveries of one app (each found instead when its source made one already);
 * answers one per input, in order. With `claim`, the new pending ones come back claimed.
 * `madeAlready`, the app's deliveries by these sources read ahead (deliveriesBySource), saves
 * reading them here; one made since that read is found by its insert's conflict.
 */
export async function createDeliveries(
  env: Env, appId: string, inputs: readonly NewDelivery[], options: { claim: boolean; madeAlready?: Promise<Map<string, DeliveryRow>> }, now = Date.now(),
): Promise<RecordedDelivery[]> {
  if (inputs.some((input) => input.appId !== appId)) throw new Error("createDeliveries records the deliveries of one app at a time");
  const found = new Map(await (options.madeAlready ?? deliveriesBySource(env, appId, inputs.map((input) => input.source))));
  const fresh = [...new Map(inputs.filter((input) => !found.has(input.source)).map((input) => [input.source, input])).values()];
  const rows = freshRows(fresh, await hitsBefore(env, appId, fresh, now), config(env).limits.WEBHOOKS_APP_HOURLY_CAP, now);
  const claimed = new Map<string, DeliveryRow>();
  if (rows.length > 0) {
    const d = db(env);
    const inserts = rows.map((row) => d.insert(webhookDeliveries).values(row).onConflictDoNothing().returning());
    const claims = options.claim ? rows.filter((row) => row.status === "pending").map((row) => claimStatement(d, row, now)) : [];
    const results = await d.batch([...inserts, ...claims] as unknown as [(typeof inserts)[number]]) as DeliveryRow[][];
    for (const [inserted] of results.slice(0, inserts.length)) if (inserted) found.set(inserted.source, inserted);
    for (const [row] of results.slice(inserts.length)) if (row) claimed.set(row.id, row);
  }
  // Nothing returned for a source: another consumer holding the same pointer made it meanwhile.
  const missing = fresh.filter((input) => !found.has(input.source)).map((input) => input.source);
  if (missing.length > 0) for (const [source, row] of await deliveriesBySource(env, appId, missing)) found.set(source, row);
  return inputs.map((input) => {
    const delivery = found.get(input.source)!;
    const mine = claimed.get(delivery.id);
    return mine ? { delivery: mine, claimed: true } : { delivery, claimed: false };
  });
}

/** How many deliveries the app's cap had counted this hour before these (one upsert counts them all); null when no cap applies. */
async function hitsBefore(env: Env, appId: string, fresh: readonly NewDelivery[], now: number): Promise<number | null> {
  const counted = fresh.filter((input) => input.failedWith === undefined).length;
  if (config(env).limits.WEBHOOKS_APP_HOURLY_CAP <= 0 || counted === 0) return null;
  return (await countHit(env, `webhooks:${appId}`, HOUR_SECONDS, now, counted)).hits - counted;
}

/** The rows to insert: each counted one in turn against the cap, as if they had come one by one. */
function freshRows(fresh: readonly NewDelivery[], hitsBeforeThese: number | null, cap: number, now: number): DeliveryRow[] {
  const at = new Date(now).toISOString();
  let hits = hitsBeforeThese ?? 0;
  return fresh.map((input) => {
    let failedWith = input.failedWith ?? null;
    if (failedWith === null && hitsBeforeThese !== null && (hits += 1) > cap) failedWith = `the app's hourly webhook cap (${cap}) is reached`;
    return {
      id: newId("whd_"), appId: input.appId, source: input.source, ruleId: input.ruleId, collection: input.collection,
      rowKey: input.rowKey, op: input.op, feedSeq: input.feedSeq, url: input.url, connection: input.connection,
      payload: input.payload, status: failedWith === null ? "pending" : "failed", attempts: 0, error: failedWith,
      replayOfId: input.replayOfId ?? null, createdAt: at, nextAttemptAt: failedWith === null ? now : null,
      responseStatus: null, responseBody: null, deliveredAt: null, lastAttemptAt: null, scheduledFor: null,
    };
  });
}

/** The app's deliveries made by `sources`, by source. */
export async function deliveriesBySource(env: Env, appId: string, sources: readonly string[]): Promise<Map<string, DeliveryRow>> {
  const unique = [...new Set(sources)];
  const found = new Map<string, DeliveryRow>();
  for (let start = 0; start < unique.length; start += SOURCES_PER_READ) {
    const rows = await db(env).select().from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.appId, appId), inArray(webhookDeliveries.source, unique.slice(start, start + SOURCES_PER_READ))));
    for (const row of rows) found.set(row.source, row);
  }
  return found;
}
