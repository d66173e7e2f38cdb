/**
 * What the effect consumer reads in D1 about one app before it records that app's share
 * of a queue batch, in one D1 batch started beside the outbox read (so none of it waits
 * for another): the app's migration-mode spans, and, when webhook entries are among the
 * pointers, the app with its live version, the deliveries those entries made already and
 * the app's signing secrets. Reading them one after another put several round trips
 * before every batch's first webhook send.
 */
import { db } from "../db/client";
import { silentIn, spansEndingAfter } from "../apps/migration-mode";
import { firingAppOf, firingAppRead, type FiringApp } from "./webhooks/fire";
import { bySource, deliveriesBySourceReads } from "./webhooks/record";
import type { DeliveryRow } from "./webhooks/deliveries";
import { secretRowRead, type SecretRow } from "./webhooks/secret";

/**
 * How far back the spans are read: an entry written earlier than this (a pointer retried
 * for that long) has its spans read again, from its own time.
 */
export const SPANS_LOOKBACK_MS = 24 * 3_600_000;

export interface AppReads {
  /** Whether a write made at or after `spansSince` was made in migration mode. */
  silent: (writtenAt: string) => boolean;
  spansSince: string;
  /** For webhook entries only (null without any): the app and its live manifest, the deliveries by source, the secret row. */
  hooks: { firing: FiringApp; madeAlready: Map<string, DeliveryRow>; secret: SecretRow | undefined } | null;
}

/** Reads what the consumer needs about `appId` in one D1 batch; `hookSources` are the outbox ids of its webhook entries. */
export async function readApp(env: Env, appId: string, hookSources: readonly string[], now = Date.now()): Promise<AppReads> {
  const d = db(env);
  const spansSince = new Date(now - SPANS_LOOKBACK_MS).toISOString();
  const spans = spansEndingAfter(d, appId, spansSince);
  if (hookSources.length === 0) return { silent: silentIn(await spans), spansSince, hooks: null };
  const made = deliveriesBySourceReads(d, appId, hookSources);
  const [spanRows, firingRows, secretRows, ...madeRows] = await d.batch([
    spans, firingAppRead(d, appId), secretRowRead(d, appId), ...made,
  ]);
  return {
    silent: silentIn(spanRows),
    spansSince,
    hooks: { firing: firingAppOf(env, firingRows), madeAlready: bySource(madeRows as DeliveryRow[][]), secret: secretRows[0] },
  };
}
