/**
 * Grant links: a URL on the app's own origin whose `#g=` fragment carries a token that
 * confers one declared custom role, optionally pinned to one row key or narrowed by a
 * where list. The page exchanges the token once (POST /_svc/grant on the app origin) for
 * a per-holder credential (`grh_…`) it keeps in localStorage: a once link is claimed by
 * the first browser, a multi link admits new holders until `max_uses`. Every request a
 * holder makes is judged as the `grant` principal that `grantPrincipalFor`
 * (src/auth/grant-holder.ts) builds, and the link's state is read again each time, so a
 * revoked or expired link stops its holders on their next request. A feed socket cannot
 * be re-checked per frame, so it carries the link's expiry (the store closes it then),
 * and revoking the link closes the open sockets of every holder it minted.
 *
 * The holder is its own identity: the principal's `grantId` (and so the row stamp
 * `{ kind: "grant", id }`) is the HOLDER's id, so `<role>:own`, `creator` and `editor`
 * mean "this browser's rows" even when many people opened one multi link.
 */
import { config } from "../config";
import { RelayError } from "../errors";
import type { AppRow } from "../db/apps";
import { appUrl } from "./urls";
import { endSockets } from "./sockets";
import {
  claimGrantLink, countRepeatClaim, findGrantHolder, findGrantLinkByToken, getGrantLink, insertGrantLink, revokeGrantLink,
  type GrantHolderRow, type GrantLinkRow,
} from "../db/grant-links";
import { isSecretOf, mintSecret, newId, sha256Hex } from "../auth/tokens";
import type { CompiledManifest } from "../manifest";
import { RESERVED_NAMES } from "../manifest/permissions";
import type { Cond, GrantPin } from "../permissions";

export const GRANT_DEFAULT_TTL_SECONDS = 30 * 86_400;
/** Names that are never custom roles (spec A: built-in roles and subjects cannot be custom roles). */
export const BUILT_IN_ROLES: readonly string[] = RESERVED_NAMES;

type Env = { DB: D1Database };

export interface GrantView {
  id: string;
  role: string;
  mode: "once" | "multi";
  max_uses: number | null;
  use_count: number;
  claim_count: number;
  pin_row_key: string | null;
  pin_where: Cond[] | null;
  label: string | null;
  /** Can admit a holder or serve one right now: not revoked, not expired. */
  active: boolean;
  expires_at: string;
  revoked_at: string | null;
  created_at: string;
}

export function grantView(row: GrantLinkRow, now = Date.now()): GrantView {
  return {
    id: row.id,
    role: row.role,
    mode: row.mode,
    max_uses: row.maxUses,
    use_count: row.useCount,
    claim_count: row.claimCount,
    pin_row_key: row.pinRowKey,
    pin_where: row.pinWhereJson === null ? null : (JSON.parse(row.pinWhereJson) as Cond[]),
    label: row.label,
    active: !row.revokedAt && Date.parse(row.expiresAt) > now,
    expires_at: row.expiresAt,
    revoked_at: row.revokedAt,
    created_at: row.createdAt,
  };
}

export function pinOf(row: GrantLinkRow): GrantPin | null {
  if (row.pinRowKey !== null) return { key: row.pinRowKey };
  if (row.pinWhereJson !== null) return { where: JSON.parse(row.pinWhereJson) as Cond[] };
  return null;
}

export interface MintGrantInput {
  role: string;
  mode?: "once" | "multi";
  max_uses?: number | null;
  label?: string | null;
  ttl_seconds?: number;
  pin?: { row_key: string } | { where: Cond[] } | null;
}

/** The role must be a custom role the live manifest declares; built-ins are refused. */
export function checkRole(manifest: CompiledManifest, role: string): void {
  if (BUILT_IN_ROLES.includes(role)) {
    throw new RelayError("invalid_request", `"${role}" is a built-in role; a grant link confers a custom role the manifest declares under roles.`, {
      field: "role", declared: Object.keys(manifest.roles),
    });
  }
  if (!Object.hasOwn(manifest.roles, role)) {
    throw new RelayError("invalid_request", `The app's manifest declares no custom role "${role.slice(0, 64)}".`, {
      field: "role", declared: Object.keys(manifest.roles),
    });
  }
}

export async function mintGrantLink(
  env: Env, app: AppRow, manifest: CompiledManifest, input: MintGrantInput, createdBy: string, now = Date.now(),
): Promise<{ row: GrantLinkRow; token: string; url: string }> {
  checkRole(manifest, input.role);
  const mode = input.mode ?? "multi";
  const ttl = Math.min(input.ttl_seconds ?? GRANT_DEFAULT_TTL_SECONDS, config(env).limits.GRANT_MAX_TTL_SECONDS);
  const token = mintSecret("grantLink");
  const pin = input.pin ?? null;
  const row: GrantLinkRow = {
    id: newId("grant_"),
    appId: app.id,
    role: input.role,
    mode,
    maxUses: mode === "once" ? 1 : (input.max_uses ?? null),
    useCount: 0,
    claimCount: 0,
    label: input.label ?? null,
    pinRowKey: pin && "row_key" in pin ? pin.row_key : null,
    pinWhereJson: pin && "where" in pin ? JSON.stringify(pin.where) : null,
    tokenHash: await sha256Hex(token),
    expiresAt: new Date(now + ttl * 1000).toISOString(),
    revokedAt: null,
    createdAt: new Date(now).toISOString(),
    createdBy,
  };
  await insertGrantLink(env, row);
  return { row, token, url: `${appUrl(config(env), app.slug)}#g=${token}` };
}

export async function grantLinkOf(env: Env, app: AppRow, id: string): Promise<GrantLinkRow> {
  const row = await getGrantLink(env, app.id, id);
  if (!row) throw new RelayError("not_found", `This app has no grant link "${id.slice(0, 100)}".`, { grant_id: id.slice(0, 100) });
  return row;
}

/**
 * Idempotent; the link and every holder it minted are refused from the next request on,
 * and the holders' open feed sockets are closed now (see `endSockets`).
 */
export async function revokeGrant(env: Cloudflare.Env, app: AppRow, id: string): Promise<GrantLinkRow> {
  await grantLinkOf(env, app, id);
  await revokeGrantLink(env, app.id, id);
  await endSockets(env, app.id, { grantLinkId: id }, "grant link revoked");
  return grantLinkOf(env, app, id);
}

/** Whether the app can serve a link or its holders: not deleted, not suspended. */
export function servable(app: AppRow): boolean {
  return app.status !== "deleted" && app.status !== "suspended";
}

/** Why a link cannot admit anyone now, or null when it can serve. */
export function linkRefusal(link: GrantLinkRow, now: number): "revoked" | "expired" | null {
  if (link.revokedAt) return "revoked";
  if (Date.parse(link.expiresAt) <= now) return "expired";
  return null;
}

const REFUSALS = {
  unknown: "This grant link is not known to this app (mistyped, forged, or for another app).",
  revoked: "This grant link was revoked by the app's owner.",
  expired: "This grant link has expired.",
  spent: "This grant link has been used up (a once link is claimed by the first browser that opens it).",
} as const;

export function grantInvalid(reason: keyof typeof REFUSALS): RelayError {
  return new RelayError("grant_invalid", REFUSALS[reason], { reason });
}

export interface ExchangeResult {
  token: string;
  holder_id: string;
  grant_id: string;
  role: string;
  pin: { row_key: string } | { where: Cond[] } | null;
  expires_at: string;
  /** true: the browser presented its remembered holder credential for this link; nothing was spent. */
  reused: boolean;
}

function exchangeResult(link: GrantLinkRow, holder: GrantHolderRow, token: string, reused: boolean): ExchangeResult {
  return {
    token,
    holder_id: holder.id,
    grant_id: link.id,
    role: link.role,
    pin: link.pinRowKey !== null ? { row_key: link.pinRowKey } : link.pinWhereJson !== null ? { where: JSON.parse(link.pinWhereJson) as Cond[] } : null,
    expires_at: link.expiresAt,
    reused,
  };
}

/**
 * Trades a link token for a holder credential on `app`. A browser that still holds a
 * valid holder credential of the same link (`remembered`) gets it back without spending
 * a use. Anything else that does not hold — unknown or forged, another app's link,
 * revoked, expired, spent — is `grant_invalid` and mints nothing.
 */
export async function exchangeGrant(env: Env, app: AppRow, grantToken: string, remembered: string | null, now = Date.now()): Promise<ExchangeResult> {
  if (!isSecretOf("grantLink", grantToken) || !servable(app)) throw grantInvalid("unknown");
  const link = await findGrantLinkByToken(env, grantToken);
  if (!link || link.appId !== app.id) throw grantInvalid("unknown");
  const refusal = linkRefusal(link, now);
  if (refusal) throw grantInvalid(refusal);
  if (remembered !== null && isSecretOf("grantHolder", remembered)) {
    const held = await findGrantHolder(env, remembered);
    if (held && held.holder.grantId === link.id && held.holder.appId === app.id) {
      await countRepeatClaim(env, link.id);
      return exchangeResult(link, held.holder, remembered, true);
    }
  }
  if (link.maxUses !== null && link.useCount >= link.maxUses) throw grantInvalid("spent");
  const token = mintSecret("grantHolder");
  const holder: GrantHolderRow = { id: newId("holder_"), grantId: link.id, appId: app.id, tokenHash: await sha256Hex(token), createdAt: new Date(now).toISOString() };
  if (!(await claimGrantLink(env, link, holder))) {
    // Lost a race: read again to say why.
    const fresh = await getGrantLink(env, app.id, link.id);
    throw grantInvalid((fresh && linkRefusal(fresh, Date.now())) ?? "spent");
  }
  return exchangeResult(link, holder, token, false);
}
