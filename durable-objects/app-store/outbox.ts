/**
 * The effect outbox: every rule a row write triggers (notify, webhooks, agentTasks) is
 * appended here in the write's own transaction, so an effect exists exactly when its row
 * change does. The due-work alarm (alarms.ts) hands the queue a pointer to each entry,
 * oldest first — never the entry itself, so no message can pass the queue's size limit
 * however large the row. The entry stays here until the effect consumer has recorded its
 * work in D1 and settles it; an entry whose pointer was handed over but not settled in
 * REQUEUE_AFTER_MS is handed over again (the consumer dedupes by `outbox_id`). When the
 * queue refuses, each entry of the batch counts an attempt and the flush is retried after
 * a growing delay.
 *
 * The first hand-over happens right after the commit, not on the alarm: waiting for the
 * alarm put a second on every webhook, notification and agent task. Flushes never overlap;
 * writes that commit while one is running go with its next pass, so a burst of writes
 * shares a few queue sends instead of making one each.
 */
import type { CompiledManifest } from "../../src/manifest";
import { inJsonList } from "../../src/db/in-list";
import { isOwnerOrAgent } from "../../src/permissions";
import { matchRules, type Change, type EffectKind } from "../../src/rules/match";
import type { Author } from "../../src/permissions";
import type { BatchCreateInput, CallContext, EffectChange, FeedEntry, OutboxEntryView, OutboxPointer } from "./contract";
import { errorLogLine } from "../../src/db/query-errors";

/**
 * How soon after a commit the alarm makes sure the outbox was handed to the queue. The
 * commit itself starts a flush at once (EagerFlush); the alarm is the safety net for a
 * flush that failed or an object that was evicted before it finished.
 */
export const OUTBOX_FLUSH_DELAY_MS = 1_000;
/** Entries per queue batch (the queue takes at most 100 messages per send). */
const OUTBOX_BATCH = 100;
/**
 * `id IN (…)` over the ids bound as one JSON array: a flush hands over up to OUTBOX_BATCH
 * of them, and Cloudflare binds at most 100 parameters to a statement.
 */
const ID_IN_LIST = `id ${inJsonList("?")}`;
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
 * asked to keep quiet is recorded as suppressed, so the engines can tell. `row` carries
 * the row's creation time and creator, so no engine has to read the row back for them.
 */
export function recordEffects(
  sql: SqlStorage, manifest: CompiledManifest, suppressed: ReadonlySet<EffectKind>, change: Change, entry: FeedEntry, row: { createdAt: string; creator: Author },
): void {
  for (const match of matchRules(manifest, change)) {
    const payload: EffectChange = {
      seq: entry.seq, op: change.op, collection: entry.collection_name, key: entry.row_key, version: entry.row_version ?? 1,
      data: entry.data, author: entry.author, creator: row.creator, created_at: row.createdAt, ts: entry.ts, suppressed: suppressed.has(match.kind),
    };
    sql.exec("INSERT INTO _svc_outbox (kind, rule_id, payload, created_at) VALUES (?, ?, ?, ?)", match.kind, match.ruleId, JSON.stringify(payload), entry.ts);
  }
}

/** Whether any effect waits to be handed to the queue (an existence probe on a partial index). */
export function outboxPending(sql: SqlStorage): boolean {
  return sql.exec("SELECT 1 FROM _svc_outbox WHERE queued_at IS NULL LIMIT 1").toArray().length > 0;
}

/** An entry handed to the queue but not settled within this is handed over again. */
export const REQUEUE_AFTER_MS = 15 * 60_000;

type OutboxRow = { id: number; kind: EffectKind; rule_id: string; attempts: number };

/**
 * Hands the queue a pointer to every entry not yet handed over (or handed over too long
 * ago without being settled), oldest first, marking each batch once the queue accepted it.
 * Answers when to run again: after the queue refused a batch (which stays, its attempts
 * counted), or when the oldest unsettled entry is due to be handed over again; null when
 * the outbox is empty.
 */
export async function flushOutbox(sql: SqlStorage, queue: Queue, appId: string, now = Date.now()): Promise<number | null> {
  for (;;) {
    const batch = sql.exec<OutboxRow>(
      "SELECT id, kind, rule_id, attempts FROM _svc_outbox WHERE queued_at IS NULL OR queued_at <= ? ORDER BY id LIMIT ?",
      now - REQUEUE_AFTER_MS, OUTBOX_BATCH,
    ).toArray();
    if (batch.length === 0) break;
    const ids = batch.map((entry) => entry.id);
    try {
      await queue.sendBatch(batch.map((entry): { body: OutboxPointer } => ({
        body: { outbox_id: `${appId}:${entry.id}`, app_id: appId, entry_id: entry.id, kind: entry.kind, rule_id: entry.rule_id },
      })));
    } catch (err) {
      sql.exec(`UPDATE _svc_outbox SET attempts = attempts + 1 WHERE ${ID_IN_LIST}`, JSON.stringify(ids));
      const attempts = Math.max(...batch.map((entry) => entry.attempts)) + 1;
      console.error(`outbox of app ${appId}: the effects queue refused ${batch.length} entries (attempt ${attempts})`, errorLogLine(err));
      return now + Math.min(OUTBOX_FLUSH_DELAY_MS * 2 ** attempts, MAX_RETRY_DELAY_MS);
    }
    sql.exec(`UPDATE _svc_outbox SET queued_at = ? WHERE ${ID_IN_LIST}`, now, JSON.stringify(ids));
  }
  const oldest = sql.exec<{ at: number | null }>("SELECT min(queued_at) AS at FROM _svc_outbox").one().at;
  return oldest === null ? null : Number(oldest) + REQUEUE_AFTER_MS;
}

/**
 * Runs the flush as soon as it is asked for, one at a time: a request while a flush runs
 * makes it go round once more, so entries committed meanwhile are taken too.
 */
export class EagerFlush {
  private running: Promise<void> | null = null;
  private again = false;

  constructor(private readonly flush: () => Promise<unknown>) {}

  /** Asks for a flush; answers when the flush that will carry what is committed now has ended. */
  request(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.loop().finally(() => { this.running = null; });
    return this.running;
  }

  /** Waits for a running flush to end, so another (the alarm's) never overlaps it. */
  settled(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      try {
        await this.flush();
      } catch (err) {
        // The alarm's flush (due within OUTBOX_FLUSH_DELAY_MS of the commit) tries again.
        console.error("outbox: a flush after commit failed; the alarm will retry it", errorLogLine(err));
        return;
      }
    } while (this.again);
  }
}

/**
 * On the store's start: entries handed to the queue but not settled become due for hand-over
 * again (the consumer dedupes by `outbox_id`, so a second pointer costs nothing). A restart
 * may have taken their messages with it; waiting REQUEUE_AFTER_MS would delay those effects
 * by a quarter of an hour. Answers whether any entry waits.
 */
export function unsettledForRehand(sql: SqlStorage): boolean {
  sql.exec("UPDATE _svc_outbox SET queued_at = NULL WHERE queued_at IS NOT NULL");
  return outboxPending(sql);
}

/** The entries the consumer's pointers name that are still unsettled (a settled one is simply absent). */
export function outboxEntries(sql: SqlStorage, ids: readonly number[]): OutboxEntryView[] {
  if (ids.length === 0) return [];
  return sql.exec<{ id: number; kind: EffectKind; rule_id: string; payload: string; created_at: string }>(
    `SELECT id, kind, rule_id, payload, created_at FROM _svc_outbox WHERE ${ID_IN_LIST} ORDER BY id`, JSON.stringify(ids),
  ).toArray().map((row) => ({ entry_id: Number(row.id), kind: row.kind, rule_id: row.rule_id, payload: row.payload, created_at: row.created_at }));
}

/** Drops entries whose work the consumer has recorded. */
export function settleOutbox(sql: SqlStorage, ids: readonly number[]): void {
  if (ids.length === 0) return;
  sql.exec(`DELETE FROM _svc_outbox WHERE ${ID_IN_LIST}`, JSON.stringify(ids));
}
