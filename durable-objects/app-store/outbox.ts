/**
 * The effect outbox: every rule a row write triggers (notify, webhooks, agentTasks) is
 * appended here in the write's own transaction, so an effect exists exactly when its row
 * change does. The due-work alarm (alarms.ts) hands the outbox to the effects queue,
 * oldest first, and an entry leaves only once the queue accepted it: delivery is at least
 * once, and consumers dedupe by `outbox_id`. When the queue refuses, each entry of the
 * batch counts an attempt and the flush is retried after a growing delay.
 */
import type { CompiledManifest } from "../../src/manifest";
import { isOwnerOrAgent } from "../../src/permissions";
import { matchRules, type Change, type EffectKind } from "../../src/rules/match";
import type { BatchCreateInput, CallContext, FeedEntry } from "./contract";

/** How soon after a commit the outbox is handed to the queue. */
export const OUTBOX_FLUSH_DELAY_MS = 1_000;
/** Entries per queue batch (the queue takes at most 100 messages per send). */
const OUTBOX_BATCH = 100;
/** The retry delay after a refused send doubles per attempt, up to this. */
const MAX_RETRY_DELAY_MS = 10 * 60_000;

/**
 * Batches are silent by default (notify and webhooks suppressed, WIRE §2.3); `emitEffects`
 * or an explicit `suppress` list decide otherwise. Only the owner or its agent may quiet
 * effects; anyone else's batch fires them like single writes.
 */
export function batchSuppression(call: CallContext, input: Pick<BatchCreateInput, "emitEffects" | "suppress">): ReadonlySet<EffectKind> {
  if (!isOwnerOrAgent(call.principal)) return new Set();
  if (input.emitEffects) return new Set();
  return new Set(input.suppress ?? ["notify", "webhooks"]);
}

/**
 * Records each rule the change triggers, in the caller's transaction. A kind the caller
 * asked to keep quiet is recorded as suppressed, so the engines can tell.
 */
export function recordEffects(sql: SqlStorage, manifest: CompiledManifest, suppressed: ReadonlySet<EffectKind>, change: Change, entry: FeedEntry): void {
  for (const match of matchRules(manifest, change)) {
    const payload = JSON.stringify({
      seq: entry.seq, op: change.op, collection: entry.collection_name, key: entry.row_key, version: entry.row_version,
      data: entry.data, author: entry.author, ts: entry.ts, suppressed: suppressed.has(match.kind),
    });
    sql.exec("INSERT INTO _svc_outbox (kind, rule_id, payload, created_at) VALUES (?, ?, ?, ?)", match.kind, match.ruleId, payload, entry.ts);
  }
}

/** Whether any effect waits for the queue (an existence probe: the outbox may be long while the queue is down). */
export function outboxPending(sql: SqlStorage): boolean {
  return sql.exec("SELECT 1 FROM _svc_outbox LIMIT 1").toArray().length > 0;
}

type OutboxEntry = { id: number; kind: string; rule_id: string; payload: string; attempts: number };

/**
 * Hands the outbox to the queue, oldest first, deleting each batch only after the queue
 * accepted it. Answers null when the outbox is empty, or when to try again after the queue
 * refused a batch (which stays, its attempts counted).
 */
export async function flushOutbox(sql: SqlStorage, queue: Queue, appId: string, now = Date.now()): Promise<number | null> {
  for (;;) {
    const batch = sql.exec<OutboxEntry>("SELECT id, kind, rule_id, payload, attempts FROM _svc_outbox ORDER BY id LIMIT ?", OUTBOX_BATCH).toArray();
    if (batch.length === 0) return null;
    const last = batch[batch.length - 1].id;
    try {
      await queue.sendBatch(batch.map((entry) => ({
        body: { outbox_id: `${appId}:${entry.id}`, app_id: appId, kind: entry.kind, rule_id: entry.rule_id, change: JSON.parse(entry.payload) },
      })));
    } catch (err) {
      sql.exec("UPDATE _svc_outbox SET attempts = attempts + 1 WHERE id <= ?", last);
      const attempts = Math.max(...batch.map((entry) => entry.attempts)) + 1;
      console.error(`outbox of app ${appId}: the effects queue refused ${batch.length} entries (attempt ${attempts})`, err);
      return now + Math.min(OUTBOX_FLUSH_DELAY_MS * 2 ** attempts, MAX_RETRY_DELAY_MS);
    }
    sql.exec("DELETE FROM _svc_outbox WHERE id <= ?", last);
  }
}
