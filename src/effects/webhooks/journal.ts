/**
 * Reading and keeping the webhook delivery journal (WIRE §2.6): the list an owner or its
 * agent reads (newest first, filtered by status and collection; the URL shown as host and
 * path only, since a query may hold a token; the payload cut past a size and flagged),
 * a replay (a new pending delivery of the same rule, target and payload, refused when the
 * rule, a webhooks rule or a schedule's webhook action, has left the live manifest), and the sweep's pruning (terminal rows past the
 * retention window, and the oldest terminal rows past the per-app cap; pending rows are
 * never pruned).
 */
import { and, desc, eq, inArray, lt, ne, sql } from "drizzle-orm";
import { config } from "../../config";
import { db } from "../../db/client";
import { webhookAttempts, webhookDeliveries } from "../../db/effects-schema";
import { RelayError } from "../../errors";
import type { AppRow } from "../../db/apps";
import { liveManifest } from "../../apps/members";
import { deliveryById, type DeliveryRow } from "./deliveries";
import { createDelivery } from "./record";
import { hostAndPath } from "./url-view";

/** How much of a payload the journal shows before cutting it. */
export const PAYLOAD_VIEW_CAP = 8192;

export interface DeliveryView {
  id: string;
  collection: string;
  rowKey: string;
  op: string;
  url: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  responseStatus: number | null;
  responseBody: string | null;
  payload: unknown;
  payloadTruncated: boolean;
  error: string | null;
  replayOfId: string | null;
  createdAt: string;
  deliveredAt: string | null;
  lastAttemptAt: string | null;
  /** When the next attempt is due (ISO), null once delivered or failed. */
  nextAttemptAt: string | null;
}

/** A stored payload as a journal shows it: parsed JSON, or the text itself, cut past PAYLOAD_VIEW_CAP and flagged (the inbound journal shows its payloads the same way). */
export function payloadView(stored: string): { payload: unknown; payloadTruncated: boolean } {
  if (stored.length > PAYLOAD_VIEW_CAP) return { payload: stored.slice(0, PAYLOAD_VIEW_CAP), payloadTruncated: true };
  try {
    return { payload: JSON.parse(stored), payloadTruncated: false };
  } catch {
    return { payload: stored, payloadTruncated: false };
  }
}

export function viewDelivery(delivery: DeliveryRow): DeliveryView {
  const { payload, payloadTruncated: truncated } = payloadView(delivery.payload);
  return {
    id: delivery.id, collection: delivery.collection, rowKey: delivery.rowKey, op: delivery.op, url: hostAndPath(delivery.url),
    status: delivery.status, attempts: delivery.attempts, responseStatus: delivery.responseStatus, responseBody: delivery.responseBody,
    payload, payloadTruncated: truncated, error: delivery.error, replayOfId: delivery.replayOfId, createdAt: delivery.createdAt,
    deliveredAt: delivery.deliveredAt, lastAttemptAt: delivery.lastAttemptAt,
    nextAttemptAt: delivery.status === "pending" && delivery.nextAttemptAt !== null ? new Date(delivery.nextAttemptAt).toISOString() : null,
  };
}

export async function listDeliveries(env: Env, appId: string, filter: { status?: DeliveryRow["status"]; collection?: string; limit: number }): Promise<DeliveryView[]> {
  const conditions = [eq(webhookDeliveries.appId, appId)];
  if (filter.status) conditions.push(eq(webhookDeliveries.status, filter.status));
  if (filter.collection) conditions.push(eq(webhookDeliveries.collection, filter.collection));
  const rows = await db(env).select().from(webhookDeliveries).where(and(...conditions))
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id)).limit(filter.limit);
  return rows.map(viewDelivery);
}

/** A new pending delivery repeating `deliveryId` for the rule as it is now; 409 when the rule is gone. */
export async function replayDelivery(env: Env, app: AppRow, deliveryId: string): Promise<DeliveryRow> {
  const original = await deliveryById(env, deliveryId);
  if (!original || original.appId !== app.id) {
    throw new RelayError("not_found", "This app has no webhook delivery with that id.", { delivery_id: deliveryId });
  }
  const manifest = await liveManifest(env, app);
  const ruleLive = manifest !== null && (manifest.webhooks.some((rule) => rule.id === original.ruleId)
    || manifest.schedules.some((rule) => rule.id === original.ruleId && rule.action.kind === "webhook"));
  if (!ruleLive) {
    throw new RelayError("conflict", "The rule that made this delivery is no longer in the app's manifest, so it cannot be replayed.", { delivery_id: deliveryId });
  }
  return createDelivery(env, {
    appId: app.id, source: `replay:${crypto.randomUUID()}`, ruleId: original.ruleId, collection: original.collection, rowKey: original.rowKey,
    op: original.op, feedSeq: original.feedSeq, url: original.url, connection: original.connection, payload: original.payload, replayOfId: original.id,
  });
}

/** Drops terminal deliveries past the retention window, then the oldest terminal ones past each app's cap. */
export async function pruneJournal(env: Env, now = Date.now()): Promise<void> {
  const { WEBHOOKS_DELIVERY_RETENTION_DAYS: days, WEBHOOKS_DELIVERY_MAX_PER_APP: cap } = config(env).limits;
  const cutoff = new Date(now - days * 86_400_000).toISOString();
  const terminal = ne(webhookDeliveries.status, "pending");
  const old = db(env).select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(and(terminal, lt(webhookDeliveries.createdAt, cutoff)));
  await db(env).delete(webhookAttempts).where(inArray(webhookAttempts.deliveryId, old));
  await db(env).delete(webhookDeliveries).where(and(terminal, lt(webhookDeliveries.createdAt, cutoff)));
  const over = await db(env).select({ appId: webhookDeliveries.appId, total: sql<number>`count(*)` }).from(webhookDeliveries)
    .where(terminal).groupBy(webhookDeliveries.appId).having(sql`count(*) > ${cap}`);
  for (const { appId, total } of over) {
    const excess = db(env).select({ id: webhookDeliveries.id }).from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.appId, appId), terminal)).orderBy(webhookDeliveries.createdAt, webhookDeliveries.id).limit(Number(total) - cap);
    const ids = (await excess).map((row) => row.id);
    for (let start = 0; start < ids.length; start += 50) {
      const chunk = ids.slice(start, start + 50);
      await db(env).delete(webhookAttempts).where(inArray(webhookAttempts.deliveryId, chunk));
      await db(env).delete(webhookDeliveries).where(inArray(webhookDeliveries.id, chunk));
    }
  }
}
