/**
 * Recording webhook deliveries (deliveries.ts takes them on from there): one, or all that
 * one app's entries of a consumer batch fire, in two D1 round trips whatever their number
 * (one when the caller read ahead): one read of those recorded already (a redelivered
 * pointer never makes a second, nor counts against the cap again), and one batch that
 * counts the new ones against the app's hourly cap, inserts them (each judged against
 * that count in SQL) and, when asked, claims the first attempt of each, all in one
 * transaction (so the caller sends it without another write first).
 * A delivery past the cap is recorded as failed without an attempt, so the journal says why.
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import type { SQLiteInsertValue } from "drizzle-orm/sqlite-core";
import { config } from "../../config";
import { db, type Db } from "../../db/client";
import { webhookDeliveries } from "../../db/effects-schema";
import { newId } from "../../auth/tokens";
import { countHitStatement, hitsSoFar, windowStartOf } from "../../db/rate-limit";
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
  const claimed = new Map<string, DeliveryRow>();
  if (fresh.length > 0) {
    const d = db(env);
    const { count, rows } = freshRows(d, appId, fresh, config(env).limits.WEBHOOKS_APP_HOURLY_CAP, now);
    const inserts = rows.map(({ values }) => d.insert(webhookDeliveries).values(values).onConflictDoNothing().returning());
    // A row the cap failed is not pending, so its claim takes nothing.
    const claims = options.claim ? rows.filter(({ mayBePending }) => mayBePending).map(({ values }) => claimStatement(d, { id: values.id, attempts: 0 }, now)) : [];
    const results = await d.batch([...count, ...inserts, ...claims] as unknown as [(typeof inserts)[number]]) as DeliveryRow[][];
    for (const [inserted] of results.slice(count.length, count.length + inserts.length)) if (inserted) found.set(inserted.source, inserted);
    for (const [row] of results.slice(count.length + inserts.length)) if (row) claimed.set(row.id, row);
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

/** A row to insert; `mayBePending` unless it is failed whatever the cap says. */
type FreshRow = { values: SQLiteInsertValue<typeof webhookDeliveries> & { id: string }; mayBePending: boolean };

/**
 * The rows to insert, and the statement that counts them against the app's hourly cap
 * (none when no cap applies or none counts), to run first in the same batch: each counted
 * one is judged in turn against the count as the batch left it, as if they had come one by
 * one, so the count and the rows it decided are written together or not at all.
 */
function freshRows(d: Db, appId: string, fresh: readonly NewDelivery[], cap: number, now: number): { count: Array<ReturnType<typeof countHitStatement>>; rows: FreshRow[] } {
  const at = new Date(now).toISOString();
  const counted = fresh.filter((input) => input.failedWith === undefined).length;
  const capped = cap > 0 && counted > 0;
  const bucket = `webhooks:${appId}`;
  const windowStart = windowStartOf(now, HOUR_SECONDS);
  const capError = `the app's hourly webhook cap (${cap}) is reached`;
  let turn = 0;
  const rows = fresh.map((input): FreshRow => {
    const base = {
      id: newId("whd_"), appId: input.appId, source: input.source, ruleId: input.ruleId, collection: input.collection,
      rowKey: input.rowKey, op: input.op, feedSeq: input.feedSeq, url: input.url, connection: input.connection,
      payload: input.payload, attempts: 0, replayOfId: input.replayOfId ?? null, createdAt: at,
      responseStatus: null, responseBody: null, deliveredAt: null, lastAttemptAt: null, scheduledFor: null,
    };
    if (input.failedWith !== undefined) return { values: { ...base, status: "failed", error: input.failedWith, nextAttemptAt: null }, mayBePending: false };
    if (!capped) return { values: { ...base, status: "pending", error: null, nextAttemptAt: now }, mayBePending: true };
    // This one is the `turn`-th of the `counted` just counted: past the cap when the hits before it reach it.
    turn += 1;
    const over = sql`${hitsSoFar(bucket, windowStart)} - ${counted - turn} > ${cap}`;
    return {
      values: {
        ...base, status: sql`CASE WHEN ${over} THEN 'failed' ELSE 'pending' END`, error: sql`CASE WHEN ${over} THEN ${capError} ELSE NULL END`,
        nextAttemptAt: sql`CASE WHEN ${over} THEN NULL ELSE ${now} END`,
      },
      mayBePending: true,
    };
  });
  return { count: capped ? [countHitStatement(d, bucket, windowStart, counted)] : [], rows };
}

/** The reads of the app's deliveries made by `sources` (one statement per SOURCES_PER_READ), batch items for the consumer's reads. */
export function deliveriesBySourceReads(d: Db, appId: string, sources: readonly string[]) {
  const unique = [...new Set(sources)];
  const reads = [];
  for (let start = 0; start < unique.length; start += SOURCES_PER_READ) {
    reads.push(d.select().from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.appId, appId), inArray(webhookDeliveries.source, unique.slice(start, start + SOURCES_PER_READ)))));
  }
  return reads;
}

/** What deliveriesBySourceReads found, by source. */
export function bySource(found: ReadonlyArray<readonly DeliveryRow[]>): Map<string, DeliveryRow> {
  return new Map(found.flat().map((row) => [row.source, row]));
}

/** The app's deliveries made by `sources`, by source. */
export async function deliveriesBySource(env: Env, appId: string, sources: readonly string[]): Promise<Map<string, DeliveryRow>> {
  return bySource(await Promise.all(deliveriesBySourceReads(db(env), appId, sources)));
}
