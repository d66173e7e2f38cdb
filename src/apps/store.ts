/**
 * The Worker's handle on an app's AppStore Durable Object: one object per app id.
 */
export function appStore(env: { APP_STORE: DurableObjectNamespace<import("../../durable-objects/app-store/app-store").AppStore> }, appId: string) {
  return env.APP_STORE.get(env.APP_STORE.idFromName(appId));
}
