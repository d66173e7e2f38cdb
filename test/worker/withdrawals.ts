// Staging the race between the Worker's access check and a withdrawal: a withdrawal is
// recorded in the app's store at a chosen moment, as the store records the ones it is told
// of (durable-objects/app-store/withdrawals.ts), so a request or socket checked before that
// moment can be shown to be turned away.
import { env, runInDurableObject } from "cloudflare:test";
import type { AppStore } from "../../durable-objects/app-store/contract";

/** Records a withdrawal reaching `selector` (null: everyone) in the app's store at `at` (ms since the epoch). */
export function stageWithdrawal(appId: string, at: number, selector: Record<string, string> | null): Promise<void> {
  const store = env.APP_STORE.get(env.APP_STORE.idFromName(appId));
  return runInDurableObject(store, (instance: AppStore, state) => {
    state.storage.sql.exec("INSERT INTO _svc_withdrawals (at, selector) VALUES (?, ?)", at, selector && JSON.stringify(selector));
    // Written behind the log's back: drop what it remembers, as a wake from hibernation would.
    (instance as unknown as { withdrawals: { forget(): void } }).withdrawals.forget();
  });
}
