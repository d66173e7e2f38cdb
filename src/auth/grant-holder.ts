/**
 * Grant-holder credentials (`grh_…`): what a browser holds after exchanging a grant link
 * once (`POST /_svc/grant`, src/apps/grant-links.ts), presented as `Authorization: Bearer
 * grh_…` or the `service.grant.<grh_…>` socket subprotocol. Resolved to the `grant`
 * principal the AppStore judges: anonymous, but carrying the link's role and pin, and the
 * holder's own id so `<role>:own` means "this browser's rows". The link is read on every
 * call, no caching, so a revoked or expired link stops its holders on their next request.
 */
import type { AppRow } from "../db/apps";
import { findGrantHolder } from "../db/grant-links";
import { linkRefusal, pinOf, servable } from "../apps/grant-links";
import type { Principal } from "../permissions";
import { isSecretOf } from "./tokens";

type Env = { DB: D1Database };

/** The grant principal, or null; see `grantPrincipalFor`. */
export type GrantPrincipal = Extract<Principal, { kind: "grant" }>;

/** A holder credential that holds: its principal, and when its link expires (ISO time). */
export interface GrantHolding {
  principal: GrantPrincipal;
  expiresAt: string;
}

/**
 * THE entry point for the app origin's data paths (same-origin endpoints, the socket):
 * given the served app and the bearer a page presented (`grh_…`, from the exchange), the
 * permission principal to hand to the AppStore — `{ kind: "grant", grantId: <holder id>,
 * linkId, role, pin, ip }` — or null when the credential does not hold on this app (unknown or
 * forged, another app's, its link revoked or expired, the app deleted or suspended).
 * Answer null with 401 `grant_invalid`. The link is read on every call: no caching, so a
 * revoke takes effect on the holder's next request.
 */
export async function grantPrincipalFor(env: Env, app: AppRow, credential: string, opts: { ip?: string } = {}): Promise<GrantPrincipal | null> {
  return (await grantHoldingFor(env, app, credential, opts))?.principal ?? null;
}

/** `grantPrincipalFor` with the link's expiry too, for callers that outlive the request (the feed socket). */
export async function grantHoldingFor(env: Env, app: AppRow, credential: string, opts: { ip?: string } = {}): Promise<GrantHolding | null> {
  if (!isSecretOf("grantHolder", credential) || !servable(app)) return null;
  const held = await findGrantHolder(env, credential);
  if (!held || held.holder.appId !== app.id || held.link.appId !== app.id) return null;
  if (linkRefusal(held.link, Date.now())) return null;
  return {
    principal: { kind: "grant", grantId: held.holder.id, linkId: held.link.id, role: held.link.role, pin: pinOf(held.link), ...(opts.ip ? { ip: opts.ip } : {}) },
    expiresAt: held.link.expiresAt,
  };
}

/** Whether a bearer value is shaped like a grant holder credential (`grh_` + 32 hex). */
export function isGrantHolderToken(value: string): boolean {
  return isSecretOf("grantHolder", value);
}
