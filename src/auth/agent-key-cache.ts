/**
 * Reusing an agent key's lookup for a few seconds on the collection endpoints (DESIGN §7:
 * "one D1 read, cached per isolate for a few seconds where safe"). The lookup — key, agent,
 * and the app the request names among the owner's apps — costs as much as the store call
 * itself, and agents write in bursts.
 *
 * It is safe only because the store re-judges: every call made with a reused lookup tells
 * the store when that lookup was read (`checkedAt`), and the store turns the call away if
 * the app has a newer live version or if a withdrawal reaching the caller was recorded
 * since (durable-objects/app-store/withdrawals.ts). Pausing an agent, revoking or rotating
 * its keys, trashing or transferring the app all report to the app's store in the same
 * request, so a reused lookup never outlives them; the route then checks D1 afresh and
 * resends (store-call.ts `callChecked`). Only a lookup that found a live app is kept;
 * refusals are never cached, and every other route reads D1 each time.
 *
 * A lookup in use is read again ahead of its end, after the request that finds it older
 * than REFRESH_AFTER_MS (waitUntil), so a steady writer never waits on D1 when it runs
 * out: otherwise one request every few seconds paid the read, and those were the slowest
 * writes of a burst. The fresh read counts from when it began, as any read does.
 */
import { findAgentByKey, type KeyLookup } from "../db/agents";
import { BoundedMap } from "../bounded-map";

/** How long a lookup is reused; well inside the store's memory of withdrawals. */
export const AGENT_LOOKUP_REUSE_MS = 5_000;
/** A lookup older than this is read again after the request that used it. */
export const AGENT_LOOKUP_REFRESH_AFTER_MS = 3_000;
const MAX_ENTRIES = 1_000;

interface Kept {
  found: Extract<KeyLookup, { ok: true }>;
  checkedAt: number;
}

const kept = new BoundedMap<string, Kept>(MAX_ENTRIES);
/** Lookups being read again ahead of their end (one read each at a time). */
const refreshing = new Set<string>();

const keyOf = (apiKey: string, appRef: string) => `${appRef} ${apiKey}`;

/**
 * The lookup for this key and app reference, reused when read within the last few
 * seconds; `checkedAt` is when it was read. A reused one near its end is read again after
 * the request (`waitUntil`).
 */
export async function reusableAgentLookup(
  env: { DB: D1Database }, apiKey: string, appRef: string, waitUntil: (work: Promise<unknown>) => void, now = Date.now(),
): Promise<{ found: KeyLookup; checkedAt: number }> {
  const id = keyOf(apiKey, appRef);
  const hit = kept.get(id);
  if (hit && now - hit.checkedAt < AGENT_LOOKUP_REUSE_MS) {
    if (now - hit.checkedAt >= AGENT_LOOKUP_REFRESH_AFTER_MS && !refreshing.has(id)) {
      refreshing.add(id);
      waitUntil(readAndKeep(env, apiKey, appRef, now).catch(() => undefined).finally(() => refreshing.delete(id)));
    }
    return hit;
  }
  if (hit) kept.delete(id);
  return { found: await readAndKeep(env, apiKey, appRef, now), checkedAt: now };
}

/** Reads the lookup from D1 (begun at `startedAt`) and keeps it if it found a live app; drops any kept one otherwise. */
async function readAndKeep(env: { DB: D1Database }, apiKey: string, appRef: string, startedAt: number): Promise<KeyLookup> {
  const found = await findAgentByKey(env, apiKey, appRef);
  const id = keyOf(apiKey, appRef);
  if (found.ok && found.app && found.app.status !== "deleted") kept.set(id, { found, checkedAt: startedAt });
  else kept.delete(id);
  return found;
}

/** Drops a reused lookup (the store turned a call made with it away). */
export function forgetAgentLookup(apiKey: string, appRef: string): void {
  kept.delete(keyOf(apiKey, appRef));
}
