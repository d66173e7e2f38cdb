/**
 * The Worker's handle on an app's AppStore Durable Object: one object per app id, typed
 * by the store's declared RPC surface (durable-objects/app-store/contract.ts).
 */
import { appStoreOf, type AppStoreApi } from "../../durable-objects/app-store/contract";

export function appStore(env: Env, appId: string): AppStoreApi {
  return appStoreOf(env.APP_STORE, appId);
}
