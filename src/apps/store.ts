/**
 * The Worker's handle on an app's AppStore Durable Object: one object per app id, typed
 * by the store's declared RPC surface.
 */
import type { AppStoreApi } from "../../durable-objects/app-store/app-store";

export function appStore(env: Env, appId: string): AppStoreApi {
  return env.APP_STORE.get(env.APP_STORE.idFromName(appId)) as unknown as AppStoreApi;
}
