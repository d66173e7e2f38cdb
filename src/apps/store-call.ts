/**
 * Calling an app's AppStore from a route: the context every call carries (app, live
 * version, the caller as a permission principal) and turning the store's plain results
 * back into catalogue errors. The principal is built here, in one place, from whoever
 * the auth middleware resolved. Row data that is missing, or too deep to cross RPC, is
 * refused here first, with the same error on every door that writes rows.
 */
import { catalogue, RelayError } from "../errors";
import type { Principal } from "../permissions";
import type { AppRow } from "../db/apps";
import type { AppContext } from "../http/types";
import {
  isStaleAccess, MAX_DATA_DEPTH, nestsDeeperThan, unwrap, type AppStoreApi, type BatchItem, type CallContext, type Outcome,
} from "../../durable-objects/app-store/contract";

export { unwrap };

export function principalOf(c: AppContext): Principal {
  const credential = c.get("credential");
  if (credential) return { kind: "credential", credentialId: credential.credentialId, mode: credential.mode, grants: credential.grants };
  const lease = c.get("lease");
  if (lease) return { kind: "lease", taskId: lease.taskId, reads: lease.reads, writes: lease.writes };
  const actor = c.get("actor");
  const agent = c.get("agent");
  if (actor?.kind === "human") return { kind: "owner", humanId: actor.ownerHumanId! };
  if (agent) return { kind: "agent", agentId: agent.agentId };
  throw new RelayError("unauthorized");
}

/**
 * The context of a store call. `checked`: the route resends a call the store turns away
 * (see `callChecked`), so the call says when its auth lookup was read and the store
 * re-judges it against newer versions and recorded withdrawals.
 */
export function storeCall(c: AppContext, app: AppRow, checked = false): CallContext {
  if (app.currentVersion === null) throw new RelayError("conflict", "This app has no live version.");
  const checkedAt = checked ? c.get("authCheckedAt") : undefined;
  return { appId: app.id, version: app.currentVersion, principal: principalOf(c), ...(checkedAt !== undefined ? { checkedAt } : {}) };
}

/** The store and call context of one checked store call (see `callChecked`). */
export interface CheckedTarget {
  store: AppStoreApi;
  call: CallContext;
}

/**
 * Sends one call to the app's store with a checked CallContext. When the store answers that
 * access changed since the check (a key revoked, the app trashed, transferred or
 * redeployed meanwhile), `recheck` reads the caller from D1 afresh — throwing their refusal
 * if they no longer may — and the call is sent once more with the new target. Nothing was
 * done by the refused call, so resending it is safe. A second refusal (access changing
 * again within the same request) reaches the caller as a 409 to send again.
 */
export async function callChecked<T>(
  first: CheckedTarget,
  recheck: () => Promise<CheckedTarget>,
  send: (store: AppStoreApi, call: CallContext) => Promise<Outcome<T>>,
): Promise<T> {
  const answer = await send(first.store, first.call);
  if (!isStaleAccess(answer)) return unwrap(answer);
  const fresh = await recheck();
  return unwrap(await send(fresh.store, fresh.call));
}

/** A batch answer on the wire (WIRE §2.3): each row's result with its error's HTTP status, and the counts. */
export interface BatchResult {
  results: { index: number; ok: boolean; key?: string; error?: { code: string; message: string; status: number; details?: Record<string, unknown> } }[];
  ok_count: number;
  error_count: number;
}

/** Renders per-row outcomes (in index order) as the wire's batch answer. */
export function batchResult(items: BatchItem[]): BatchResult {
  const results = items.map((item): BatchResult["results"][number] => {
    if (item.ok) return { index: item.index, ok: true, key: item.value };
    const { code, message, details } = item.error;
    return { index: item.index, ok: false, error: { code, message, status: catalogue[code].status, ...(details ? { details } : {}) } };
  });
  const okCount = results.filter((result) => result.ok).length;
  return { results, ok_count: okCount, error_count: results.length - okCount };
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
