/**
 * Calling an app's AppStore from a route: the context every call carries (app, live
 * version, the caller as a permission principal) and turning the store's plain results
 * back into catalogue errors. The principal is built here, in one place, from whoever
 * the auth middleware resolved. Row data that is missing, or too deep to cross RPC, is
 * refused here first, with the same error on every door that writes rows.
 */
import { RelayError } from "../errors";
import type { Principal } from "../permissions";
import type { AppRow } from "../db/apps";
import type { AppContext } from "../http/types";
import type { AppStoreApi, CallContext, Outcome } from "../../durable-objects/app-store/app-store";
import { isStaleAccess } from "../../durable-objects/app-store/withdrawals";
import { MAX_DATA_DEPTH, nestsDeeperThan } from "../../durable-objects/app-store/rows";

export function principalOf(c: AppContext): Principal {
  const credential = c.get("credential");
  if (credential) return { kind: "credential", credentialId: credential.credentialId, mode: credential.mode, grants: credential.grants };
  const actor = c.get("actor");
  const agent = c.get("agent");
  if (actor?.kind === "human") return { kind: "owner", humanId: actor.ownerHumanId! };
  if (agent) return { kind: "agent", agentId: agent.agentId };
  throw new RelayError("unauthorized");
}

/**
 * The context of a store call. `checked`: the route resends a call the store turns away
 * (see `checkedStore`), so the call says when its auth lookup was read and the store
 * re-judges it against newer versions and recorded withdrawals.
 */
export function storeCall(c: AppContext, app: AppRow, checked = false): CallContext {
  if (app.currentVersion === null) throw new RelayError("conflict", "This app has no live version.");
  const checkedAt = checked ? c.get("authCheckedAt") : undefined;
  return { appId: app.id, version: app.currentVersion, principal: principalOf(c), ...(checkedAt !== undefined ? { checkedAt } : {}) };
}

/**
 * The app's store, for calls whose first argument is a checked CallContext: when the store
 * answers that access changed since the check (a key revoked, the app trashed, transferred
 * or redeployed meanwhile), `recheck` reads the caller from D1 afresh — throwing their
 * refusal if they no longer may — and the call is sent once more with the new context.
 * Nothing was done by the refused call, so resending it is safe. A second refusal (access
 * changing again within the same request) reaches the caller as a 409 to send again.
 */
export function checkedStore(store: AppStoreApi, recheck: () => Promise<{ store: AppStoreApi; call: CallContext }>): AppStoreApi {
  // Methods are looked up and invoked on the stub itself: an RPC method is a stub too, and
  // `.call` on it would be a remote call of a method named "call".
  type Method = (call: CallContext, ...args: unknown[]) => Promise<Outcome<unknown>>;
  const methodOf = (target: AppStoreApi, name: string | symbol) => (call: CallContext, ...args: unknown[]) =>
    (target as unknown as Record<string | symbol, Method>)[name](call, ...args);
  return new Proxy(store, {
    get(target, name) {
      if (typeof name === "symbol" || name === "then") return Reflect.get(target, name);
      return async (call: CallContext, ...args: unknown[]) => {
        const first = await methodOf(target, name)(call, ...args);
        if (!isStaleAccess(first)) return first;
        const fresh = await recheck();
        return methodOf(fresh.store, name)(fresh.call, ...args);
      };
    },
  });
}

/**
 * Refuses row data nested deeper than the store accepts, before it is sent: a value that
 * deep overflows the stack of the RPC serializer (a 500 otherwise).
 */
export function requireShallow(data: unknown, field: string): void {
  if (nestsDeeperThan(data, MAX_DATA_DEPTH)) {
    throw new RelayError("invalid_request", `Row data may nest at most ${MAX_DATA_DEPTH} arrays or objects deep.`, { field, limit: MAX_DATA_DEPTH });
  }
}

/**
 * The checks every route that writes a row runs on its `data` before the store call: it
 * is present, and not nested too deep. `field` names where the data sat in the request
 * (`data`, or `rows.3.data` in a batch).
 */
export function requireRowData(data: unknown, field: string): void {
  if (data === undefined) throw new RelayError("invalid_request", "A row needs `data`.", { field });
  requireShallow(data, field);
}

export function unwrap<T>(outcome: Outcome<T>): T {
  if (outcome.ok) return outcome.value;
  throw new RelayError(outcome.error.code, outcome.error.message, outcome.error.details);
}
