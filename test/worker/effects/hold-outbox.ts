// A store's commits hand their effects to the queue at once (EagerFlush in the store's
// outbox). Tests that read outbox entries, or hand them over themselves, hold that first:
// the store's instance gets a flush that does nothing, until the instance is gone. The
// alarm still flushes; such tests take it away (or run it) themselves.
import { env, runInDurableObject } from "cloudflare:test";

/** What the store calls after a commit (EagerFlush's shape), doing nothing. */
const heldFlush = { request: async () => {}, settled: async () => {} };

/** Stops `appId`'s store from handing entries to the queue on commit; call before the writes. */
export async function holdEagerFlush(appId: string): Promise<void> {
  const stub = env.APP_STORE.get(env.APP_STORE.idFromName(appId));
  await runInDurableObject(stub, (instance) => {
    (instance as unknown as { eagerFlush: typeof heldFlush }).eagerFlush = heldFlush;
  });
}
