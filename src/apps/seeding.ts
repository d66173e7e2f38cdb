/**
 * A create with starter rows (`input_data`) is two writes that cannot share a
 * transaction: the app and its version in D1, then the rows in the app's store (which
 * reads the version from D1, so it cannot go first). The create promises the rows with
 * the deploy or not at all, so until the rows are in, the app is hidden: a placeholder,
 * `seeding:<human id>` (src/db/apps.ts), owns it, so it is in no list, its id and slug
 * answer app_not_found, its pages are not served and it takes none of its person's app
 * slots. Once seeded it is handed to its person in one statement that checks the app cap
 * again. A refused or failed seed purges it; a create the relay died in the middle of
 * leaves it hidden, and the cron's `seeds` sweep purges it once SEEDING_LAPSE_MS has
 * passed since its insert. Its slug stays taken until then (the unique index holds it).
 */
import { RelayError } from "../errors";
import { seedingAppsCreatedBefore, type AppRow } from "../db/apps";
import { appStore } from "./store";
import { purgeApp, purgeIfStillHidden } from "./trash";
import { handOverOrRefuse } from "./hand-over";

/** Far longer than any seed takes (one store transaction of rows bounded by the deploy body). */
export const SEEDING_LAPSE_MS = 5 * 60_000;

/** The seeding window and the cron's period after it: by then an abandoned seeding create has been purged. */
export const SEEDING_FREED_MINUTES = SEEDING_LAPSE_MS / 60_000 + 5;

/**
 * The refusal of a create with starter rows when the person already has the cap's worth of
 * such creates still writing their rows (hidden, owned by their placeholder: the bound on
 * how many hidden apps one person can hold), which is not a full account.
 */
export function seedingCapReached(cap: number): RelayError {
  return new RelayError("account_quota_exceeded",
    `This account has ${cap} creates with starter rows still writing them, the most it may have at once; send this one when one finishes. One that was cut off is undone within ${SEEDING_FREED_MINUTES} minutes.`,
    { limit: cap, resource: "apps" });
}

const UNDONE = "The create stalled and was undone; send it again.";

export type StarterRows = Record<string, { key: string | null; data: unknown }[]>;

/**
 * Writes the starter rows in the hidden app's store in one transaction, then hands the app
 * (owned by its seeding placeholder) to `humanId`. Anything short of that purges the app
 * and answers why: the store's refusal (a unique clash, the row quota), a full account,
 * or the failure itself.
 */
export async function seedThenHandOver(env: Env, app: AppRow, agentId: string, rows: StarterRows, humanId: string, cap: number): Promise<void> {
  const list = Object.fromEntries(Object.entries(rows).map(([c, r]) => [c, r.map((row) => ({ data: row.data, ...(row.key ? { key: row.key } : {}) }))]));
  try {
    const outcome = await appStore(env, app.id).seed({ appId: app.id, version: 1, principal: { kind: "agent", agentId } }, list);
    // The store answers app_not_found only when it was purged beneath the seed: the sweep undid a create slower than its window.
    if (!outcome.ok && outcome.error.code === "app_not_found") throw new RelayError("internal_error", UNDONE);
    if (!outcome.ok) throw new RelayError(outcome.error.code, outcome.error.message, outcome.error.details);
    await handOverOrRefuse(env, app.id, app.ownerHumanId, humanId, cap, UNDONE);
  } catch (err) {
    await purgeIfStillHidden(env, app.id, app.ownerHumanId, "create");
    throw err;
  }
}

/** The cron's undo of creates that died before their app was seeded and handed over: purges each; answers how many. */
export async function undoAbandonedSeeds(env: Env, now: number, batch = 50): Promise<number> {
  const orphans = await seedingAppsCreatedBefore(env, new Date(now - SEEDING_LAPSE_MS).toISOString(), batch);
  for (const appId of orphans) await purgeApp(env, appId);
  return orphans.length;
}
