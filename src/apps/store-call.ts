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
import type { CallContext, Outcome } from "../../durable-objects/app-store/app-store";
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

export function storeCall(c: AppContext, app: AppRow): CallContext {
  if (app.currentVersion === null) throw new RelayError("conflict", "This app has no live version.");
  return { appId: app.id, version: app.currentVersion, principal: principalOf(c) };
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
