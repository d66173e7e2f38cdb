/**
 * The effects queue's consumer (DESIGN §3): each message names work, never carries it.
 * - An outbox pointer: the entry is read from the app's AppStore (absent: it was settled
 *   already), turned into its engine's record in D1 (a webhook delivery, made once per
 *   entry however often the pointer arrives), the entry settled, then the work started.
 * - A webhook attempt: the delivery it names is taken a step (deliveries.ts).
 * - A notification digest: the recipient's held notifications go (notify/digests.ts);
 *   a notify entry's notifications are recorded once per entry (notify/fire.ts).
 * A message whose work throws is retried with a growing delay (the queue's dead-letter
 * queue takes it after `max_retries`); a malformed one is acknowledged and reported,
 * never retried. An agentTasks entry becomes a queued task in D1 (tasks/record.ts), and
 * the owner's task workers are woken (tasks/wake.ts). Entries written while the app was
 * in migration mode are recorded silent (src/apps/migration-mode.ts).
 */
import { errorLogLine } from "../db/query-errors";
import type { EffectChange, OutboxEntryView, OutboxPointer } from "../../durable-objects/app-store/contract";
import { appStore } from "../apps/store";
import { readEffectMessage } from "./messages";
import { deliveryInputForChange, firingApp, type FiringApp } from "./webhooks/fire";
import { attemptClaimed, attemptRun, runDeliveries, runDelivery, type AttemptRun, type DeliveryRow } from "./webhooks/deliveries";
import { createDeliveries, type NewDelivery } from "./webhooks/record";
import { recordNotifications } from "./notify/fire";
import { runDigest, type DigestKey } from "./notify/digests";
import { recordTask } from "./tasks/record";
import { wakeOwner } from "./tasks/wake";
import { silentWrites } from "../apps/migration-mode";
import { readApp, type AppReads } from "./app-reads";

/** A retried message waits 2^attempts seconds, at most this. */
const MAX_RETRY_DELAY_SECONDS = 300;

function retryLater(message: Message<unknown>): void {
  message.retry({ delaySeconds: Math.min(MAX_RETRY_DELAY_SECONDS, 2 ** Math.max(1, message.attempts)) });
}

/**
 * Records what one outbox entry asks for, except a webhook delivery: that comes back to be
 * recorded with the batch's others (null when the entry asks for none). A change written
 * while the app was in migration mode is treated as one its writer kept quiet: each engine
 * records it silent, as it does a batch import's. `firing` is the app's one lookup for the
 * batch.
 */
async function recordEntry(
  env: Env, pointer: OutboxPointer, entry: OutboxEntryView, silent: (writtenAt: string) => boolean, firing: () => Promise<FiringApp>,
): Promise<NewDelivery | null> {
  const recorded = JSON.parse(entry.payload) as EffectChange;
  const change: EffectChange = silent(recorded.ts) ? { ...recorded, suppressed: true } : recorded;
  switch (entry.kind) {
    case "webhooks":
      return deliveryInputForChange(env, pointer.app_id, pointer.outbox_id, entry.rule_id, change, firing);
    case "notify":
      await recordNotifications(env, pointer.app_id, pointer.outbox_id, entry.rule_id, change);
      return null;
    case "agentTasks": {
      const recorded = await recordTask(env, pointer.app_id, pointer.outbox_id, entry.rule_id, change);
      // Waking is a hint (polling is the floor): a failure never retries the entry.
      if (recorded.queued) await wakeOwner(env, recorded.ownerHumanId, pointer.app_id).catch((err) => console.error(`agent tasks: the workers of app ${pointer.app_id} could not be woken`, errorLogLine(err)));
      return null;
    }
  }
}

/**
 * One app's pointers: read their entries in one call, record each (the webhook deliveries
 * all together, their first attempts claimed), settle what was recorded. What the entries
 * need from D1 is read in one batch beside the outbox read (app-reads.ts), and the first
 * attempts go out as soon as they are recorded: answers those attempts, to be awaited by
 * the caller.
 */
async function consumeOutbox(env: Env, appId: string, items: Array<{ message: Message<unknown>; pointer: OutboxPointer }>, run: AttemptRun): Promise<Array<Promise<void>>> {
  const attemptsStarted: Array<Promise<void>> = [];
  const hookSources = items.filter((item) => item.pointer.kind === "webhooks").map((item) => item.pointer.outbox_id);
  const reads = readApp(env, appId, hookSources);
  // Awaited below unless the outbox read fails first.
  reads.catch(() => undefined);
  let entries: Map<number, OutboxEntryView>;
  try {
    entries = new Map((await appStore(env, appId).outboxEntries(items.map((item) => item.pointer.entry_id))).map((entry) => [entry.entry_id, entry]));
  } catch (err) {
    console.error(`effects: the outbox of app ${appId} could not be read`, errorLogLine(err));
    for (const item of items) retryLater(item.message);
    return attemptsStarted;
  }
  let read: AppReads;
  let silent: (writtenAt: string) => boolean;
  try {
    read = await reads;
    const oldest = [...entries.values()].reduce((min, entry) => (entry.created_at < min ? entry.created_at : min), new Date().toISOString());
    // An entry older than the spans read ahead (a pointer retried for long) has them read again from its time.
    silent = oldest >= read.spansSince ? read.silent : await silentWrites(env, appId, oldest);
  } catch (err) {
    console.error(`effects: the migration mode of app ${appId} could not be read`, errorLogLine(err));
    for (const item of items) retryLater(item.message);
    return attemptsStarted;
  }
  const hooksRead = read.hooks;
  if (hooksRead) run.knownSecrets(appId, hooksRead.secret);
  const lookupOnce = async () => (hooksRead ? hooksRead.firing : firingApp(env, appId));
  const settled: number[] = [];
  const recorded: Array<Message<unknown>> = [];
  /** Records one pointer's entry; answers the webhook delivery it asks for, to be recorded with the others. */
  const recordOne = async ({ message, pointer }: { message: Message<unknown>; pointer: OutboxPointer }) => {
    const entry = entries.get(pointer.entry_id);
    if (!entry) {
      message.ack();
      return null;
    }
    try {
      const input = await recordEntry(env, pointer, entry, silent, lookupOnce);
      if (input) return { message, entryId: entry.entry_id, input };
      settled.push(entry.entry_id);
      recorded.push(message);
    } catch (err) {
      console.error(`effects: outbox entry ${pointer.outbox_id} could not be recorded`, errorLogLine(err));
      retryLater(message);
    }
    return null;
  };
  /** The webhook deliveries in one go (one batch, however many; all recorded, or none and all retried), their first attempts started at once. */
  const recordHooks = async (hookItems: typeof items) => {
    const hooks = (await Promise.all(hookItems.map(recordOne))).filter((hook) => hook !== null);
    if (hooks.length === 0) return;
    try {
      const madeAlready = hooksRead ? Promise.resolve(hooksRead.madeAlready) : undefined;
      const made = await createDeliveries(env, appId, hooks.map((hook) => hook.input), { claim: true, madeAlready });
      for (const [index, { delivery, claimed }] of made.entries()) {
        // A fresh delivery's first attempt goes now; should it fail to start, the sweep finds it overdue once the claim's lease ends.
        if (claimed) attemptsStarted.push(attemptClaimed(env, delivery, run).catch(attemptFailed(delivery)));
        else if (delivery.status === "pending") attemptsStarted.push(runDelivery(env, delivery, Date.now(), run).catch(attemptFailed(delivery)));
        settled.push(hooks[index].entryId);
        recorded.push(hooks[index].message);
      }
    } catch (err) {
      console.error(`effects: the webhook deliveries of app ${appId} could not be recorded`, errorLogLine(err));
      for (const hook of hooks) retryLater(hook.message);
    }
  };
  // Each entry's record is its own (unique by the entry), so they are made side by side; the webhook sends wait for no other engine's records.
  const isHook = (item: (typeof items)[number]) => entries.get(item.pointer.entry_id)?.kind === "webhooks";
  await Promise.all([recordHooks(items.filter(isHook)), ...items.filter((item) => !isHook(item)).map(recordOne)]);
  try {
    await appStore(env, appId).settleOutbox(settled);
  } catch (err) {
    // The records exist (made once per entry); the pointers come back and find them.
    console.error(`effects: the outbox of app ${appId} could not be settled`, errorLogLine(err));
  }
  for (const message of recorded) message.ack();
  return attemptsStarted;
}

function attemptFailed(delivery: DeliveryRow): (err: unknown) => void {
  return (err) => console.error(`webhooks: delivery ${delivery.id} could not be attempted`, errorLogLine(err));
}

/** The batch's due retries: read and claimed together, each message acknowledged once its delivery's step is done, retried otherwise. */
async function runAttemptMessages(env: Env, attempts: Array<{ message: Message<unknown>; deliveryId: string }>, run: AttemptRun): Promise<void> {
  if (attempts.length === 0) return;
  let steps: Array<Promise<void>>;
  try {
    steps = await runDeliveries(env, attempts.map((attempt) => attempt.deliveryId), Date.now(), run);
  } catch (err) {
    console.error("webhooks: the batch's due attempts could not be read or claimed", errorLogLine(err));
    for (const { message } of attempts) retryLater(message);
    return;
  }
  await Promise.all(steps.map(async (step, index) => {
    const { message, deliveryId } = attempts[index];
    try {
      await step;
      message.ack();
    } catch (err) {
      console.error(`webhooks: delivery ${deliveryId} could not be attempted`, errorLogLine(err));
      retryLater(message);
    }
  }));
}

export async function consumeEffects(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const byApp = new Map<string, Array<{ message: Message<unknown>; pointer: OutboxPointer }>>();
  const attempts: Array<{ message: Message<unknown>; deliveryId: string }> = [];
  const digests: Array<{ message: Message<unknown>; key: DigestKey }> = [];
  for (const message of batch.messages) {
    const read = readEffectMessage(message.body);
    if (read === null) {
      console.error("effects: malformed message dropped", message.id);
      message.ack();
    } else if (read.type === "webhook_attempt") {
      attempts.push({ message, deliveryId: read.delivery_id });
    } else if (read.type === "notify_digest") {
      digests.push({ message, key: { appId: read.app_id, channel: read.channel, recipient: read.recipient } });
    } else {
      const group = byApp.get(read.pointer.app_id) ?? [];
      group.push({ message, pointer: read.pointer });
      byApp.set(read.pointer.app_id, group);
    }
  }
  // The batch's attempts share their secret reads, their outcome writes and a bound on the requests in flight.
  const run = attemptRun(env);
  await Promise.all([
    ...[...byApp].map(async ([appId, items]) => {
      await Promise.all(await consumeOutbox(env, appId, items, run));
    }),
    runAttemptMessages(env, attempts, run),
    ...digests.map(async ({ message, key }) => {
      try {
        await runDigest(env, key);
        message.ack();
      } catch (err) {
        console.error(`notify: the digest of ${key.recipient} in app ${key.appId} could not be sent`, errorLogLine(err));
        retryLater(message);
      }
    }),
  ]);
}
