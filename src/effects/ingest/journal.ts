/**
 * Reading and keeping the inbound delivery journal (WIRE §2.7; spec B): the owner's list
 * (newest first, by hook and status; the payload shown parsed, cut past the same size as
 * the outbound journal's and flagged), a replay (the stored body run again through the
 * hook's current rule, bypassing dedupe, as a new entry), and the sweep's pruning (entries
 * past the retention window, then the oldest past the per-app cap; an entry still
 * processing is never pruned).
 */
import { and, desc, eq, inArray, lt, ne, sql } from "drizzle-orm";
import { config } from "../../config";
import { db } from "../../db/client";
import { ingestDeliveries } from "../../db/ingest-schema";
import { RelayError } from "../../errors";
import type { AppRow } from "../../db/apps";
import { payloadView } from "../webhooks/journal";
import { deliver, type DeliveryOutcome } from "./deliver";
import { liveHookByName } from "./hooks";

type DeliveryRow = typeof ingestDeliveries.$inferSelect;

export interface IngestDeliveryView {
  id: string;
  hook: string;
  status: DeliveryRow["status"];
  source: DeliveryRow["source"];
  dedupeKey: string | null;
  rowKey: string | null;
  error: { code: string; message: string } | null;
  payload: unknown;
  payloadTruncated: boolean;
  replayOfId: string | null;
  createdAt: string;
}

export function viewIngestDelivery(row: DeliveryRow): IngestDeliveryView {
  return {
    id: row.id, hook: row.hookName, status: row.status, source: row.source, dedupeKey: row.dedupeKey, rowKey: row.rowKey,
    error: row.errorCode ? { code: row.errorCode, message: row.errorMessage ?? "" } : null, ...payloadView(row.payload),
    replayOfId: row.replayOfId, createdAt: row.createdAt,
  };
}

export async function listIngestDeliveries(env: Env, appId: string, filter: { hook?: string; status?: DeliveryRow["status"]; limit: number }): Promise<IngestDeliveryView[]> {
  const conditions = [eq(ingestDeliveries.appId, appId)];
  if (filter.hook) conditions.push(eq(ingestDeliveries.hookName, filter.hook));
  if (filter.status) conditions.push(eq(ingestDeliveries.status, filter.status));
  const rows = await db(env).select().from(ingestDeliveries).where(and(...conditions))
    .orderBy(desc(ingestDeliveries.createdAt), desc(ingestDeliveries.id)).limit(filter.limit);
  return rows.map(viewIngestDelivery);
}

/**
 * Runs a journaled body again through its hook's rule as it is now, bypassing dedupe;
 * answers the new entry. 404 for another app's or an unknown delivery; a hook whose rule
 * left the manifest cannot replay (409).
 */
export async function replayIngestDelivery(env: Env, app: AppRow, deliveryId: string): Promise<IngestDeliveryView> {
  const original = (await db(env).select().from(ingestDeliveries).where(eq(ingestDeliveries.id, deliveryId)).limit(1))[0];
  if (!original || original.appId !== app.id) {
    throw new RelayError("not_found", "This app has no inbound delivery with that id.", { delivery_id: deliveryId.slice(0, 64) });
  }
  let hook;
  try {
    hook = await liveHookByName(env, app.id, original.hookName);
  } catch {
    throw new RelayError("conflict", `The hook "${original.hookName}" is no longer in the app's manifest, so its deliveries cannot be replayed.`, { hook: original.hookName });
  }
  let body;
  try {
    body = JSON.parse(original.payload);
  } catch {
    body = undefined;
  }
  const outcome: DeliveryOutcome = await deliver(env, {
    app: { id: app.id, version: app.currentVersion ?? 1 }, hook, source: "replay", rawBody: original.payload, body, headers: null, dedupe: false, replayOfId: original.id,
  });
  const row = (await db(env).select().from(ingestDeliveries).where(eq(ingestDeliveries.id, outcome.deliveryId)).limit(1))[0];
  return viewIngestDelivery(row);
}

/** Drops entries past the retention window, then each app's oldest past its cap; `processing` entries stay. */
export async function pruneIngestJournal(env: Env, now = Date.now()): Promise<void> {
  const { INGEST_DELIVERY_RETENTION_DAYS: days, INGEST_DELIVERY_MAX_PER_APP: cap } = config(env).limits;
  const cutoff = new Date(now - days * 86_400_000).toISOString();
  const settled = ne(ingestDeliveries.status, "processing");
  await db(env).delete(ingestDeliveries).where(and(settled, lt(ingestDeliveries.createdAt, cutoff)));
  const over = await db(env).select({ appId: ingestDeliveries.appId, total: sql<number>`count(*)` }).from(ingestDeliveries)
    .where(settled).groupBy(ingestDeliveries.appId).having(sql`count(*) > ${cap}`);
  for (const { appId, total } of over) {
    const excess = await db(env).select({ id: ingestDeliveries.id }).from(ingestDeliveries)
      .where(and(eq(ingestDeliveries.appId, appId), settled)).orderBy(ingestDeliveries.createdAt, ingestDeliveries.id).limit(Number(total) - cap);
    const ids = excess.map((row) => row.id);
    for (let start = 0; start < ids.length; start += 50) await db(env).delete(ingestDeliveries).where(inArray(ingestDeliveries.id, ids.slice(start, start + 50)));
  }
}
