/**
 * Service credentials: what minting, listing, pausing, resuming, revoking and rotating
 * mean, apart from HTTP. A credential is a bearer token for one app's collection
 * endpoints; its power is its allowlist intersected with the owner's authority (the
 * permission engine applies both), it carries no role, and it can never manage
 * credentials, grants or members (routes other than the collection endpoints refuse it).
 * Lifetimes follow spec B's Limits: 365 days by default, a longer ttl clamped to
 * CREDENTIAL_MAX_TTL_SECONDS, no expiry only when asked for; a rotation keeps the old
 * token for an overlap window (1 day by default, clamped to CREDENTIAL_MAX_OVERLAP_SECONDS,
 * 0 = the old token dies at once), never beyond the credential's own expiry.
 */
import { config } from "../config";
import { RelayError } from "../errors";
import type { AppRow } from "../db/apps";
import {
  getCredential, insertCredential, revokeCredential, rotateCredential, setCredentialPaused, type CredentialRow,
} from "../db/credentials";
import { mintSecret, newId, nowIso, sha256Hex } from "../auth/tokens";
import type { CompiledManifest } from "../manifest";
import type { CredentialGrant } from "../permissions";

export const CREDENTIAL_DEFAULT_TTL_SECONDS = 365 * 86_400;
export const ROTATION_DEFAULT_OVERLAP_SECONDS = 86_400;
const TOKEN_PREFIX_LENGTH = 12;

type Env = { DB: D1Database };

export interface CredentialView {
  id: string;
  label: string | null;
  token_prefix: string;
  mode: "explicit" | "following";
  grants: CredentialGrant[];
  members: boolean;
  paused: boolean;
  /** Usable right now: not revoked, not paused, not expired. */
  active: boolean;
  expires_at: string | null;
  paused_at: string | null;
  revoked_at: string | null;
  rotated_at: string | null;
  previous_token_prefix: string | null;
  previous_expires_at: string | null;
  created_at: string;
  last_used_at: string | null;
}

export function credentialView(row: CredentialRow, now = Date.now()): CredentialView {
  const expired = row.expiresAt !== null && Date.parse(row.expiresAt) <= now;
  // The overlap token is listed only while it still works.
  const overlapLive = !row.revokedAt && row.previousTokenHash !== null && row.previousExpiresAt !== null && Date.parse(row.previousExpiresAt) > now;
  return {
    id: row.id,
    label: row.label,
    token_prefix: row.tokenPrefix,
    mode: row.mode,
    grants: JSON.parse(row.grantsJson) as CredentialGrant[],
    members: row.members,
    paused: row.pausedAt !== null,
    active: !row.revokedAt && !row.pausedAt && !expired,
    expires_at: row.expiresAt,
    paused_at: row.pausedAt,
    revoked_at: row.revokedAt,
    rotated_at: row.rotatedAt,
    previous_token_prefix: overlapLive ? row.previousTokenPrefix : null,
    previous_expires_at: overlapLive ? row.previousExpiresAt : null,
    created_at: row.createdAt,
    last_used_at: row.lastUsedAt,
  };
}

export interface MintCredentialInput {
  mode?: "explicit" | "following";
  grants?: CredentialGrant[];
  members?: boolean;
  label?: string | null;
  /** undefined: the default lifetime; null: no expiry. */
  ttl_seconds?: number | null;
  no_expiry?: boolean;
}

/** The credential's expiry from the request: default, clamped, or none (opt-in). */
export function credentialExpiry(env: object, input: Pick<MintCredentialInput, "ttl_seconds" | "no_expiry">, now = Date.now()): string | null {
  if (input.no_expiry === true && typeof input.ttl_seconds === "number") {
    throw new RelayError("invalid_request", "ttl_seconds and no_expiry are mutually exclusive: give a lifetime or ask for none.", { field: "no_expiry" });
  }
  if (input.no_expiry === true || input.ttl_seconds === null) return null;
  const max = config(env).limits.CREDENTIAL_MAX_TTL_SECONDS;
  const ttl = Math.min(input.ttl_seconds ?? CREDENTIAL_DEFAULT_TTL_SECONDS, max);
  return new Date(now + ttl * 1000).toISOString();
}

/** Every entry names a declared collection, once. */
export function checkGrants(manifest: CompiledManifest, grants: CredentialGrant[]): CredentialGrant[] {
  const seen = new Set<string>();
  return grants.map((g, i) => {
    if (!Object.hasOwn(manifest.collections, g.collection)) {
      throw new RelayError("invalid_request", `grants.${i}.collection: the app declares no collection "${g.collection.slice(0, 64)}".`, {
        field: `grants.${i}.collection`, collection: g.collection.slice(0, 64),
      });
    }
    if (seen.has(g.collection)) {
      throw new RelayError("invalid_request", `grants.${i}.collection: "${g.collection}" is named twice; give one entry per collection.`, { field: `grants.${i}.collection` });
    }
    seen.add(g.collection);
    const ops = [...new Set(g.ops)];
    return { collection: g.collection, ops, ...(g.scope ? { scope: g.scope } : {}) };
  });
}

export async function mintCredential(
  env: Env, app: AppRow, manifest: CompiledManifest, input: MintCredentialInput, createdBy: string,
): Promise<{ row: CredentialRow; token: string }> {
  const grants = checkGrants(manifest, input.grants ?? []);
  const expiresAt = credentialExpiry(env, input);
  const token = mintSecret("serviceCredential");
  const row: CredentialRow = {
    id: newId("cred_"),
    appId: app.id,
    label: input.label ?? null,
    mode: input.mode ?? "explicit",
    grantsJson: JSON.stringify(grants),
    members: input.members ?? false,
    tokenHash: await sha256Hex(token),
    tokenPrefix: token.slice(0, TOKEN_PREFIX_LENGTH),
    previousTokenHash: null,
    previousTokenPrefix: null,
    previousExpiresAt: null,
    expiresAt,
    pausedAt: null,
    revokedAt: null,
    rotatedAt: null,
    createdAt: nowIso(),
    createdBy,
    lastUsedAt: null,
  };
  await insertCredential(env, row);
  return { row, token };
}

export async function credentialOf(env: Env, app: AppRow, id: string): Promise<CredentialRow> {
  const row = await getCredential(env, app.id, id);
  if (!row) throw new RelayError("not_found", `This app has no service credential "${id.slice(0, 100)}".`, { credential_id: id.slice(0, 100) });
  return row;
}

function revokedConflict(row: CredentialRow): RelayError {
  return new RelayError("conflict", "This credential is revoked; revoking is permanent. Mint a new credential instead.", {
    credential_id: row.id, revoked_at: row.revokedAt,
  });
}

/** Pause (idempotent) or resume (idempotent; never undoes a revoke). Takes effect on the next request. */
export async function setPaused(env: Env, app: AppRow, id: string, paused: boolean): Promise<CredentialRow> {
  const row = await credentialOf(env, app, id);
  if (row.revokedAt) throw revokedConflict(row);
  if ((row.pausedAt !== null) === paused) return row;
  const updated = await setCredentialPaused(env, app.id, id, paused);
  if (!updated) throw revokedConflict(await credentialOf(env, app, id));
  return updated;
}

/** Permanent and idempotent; the overlap-window token dies with it. */
export async function revoke(env: Env, app: AppRow, id: string): Promise<CredentialRow> {
  await credentialOf(env, app, id);
  await revokeCredential(env, app.id, id);
  return credentialOf(env, app, id);
}

export async function rotate(
  env: Env, app: AppRow, id: string, overlapSeconds: number | undefined, now = Date.now(),
): Promise<{ row: CredentialRow; token: string }> {
  const row = await credentialOf(env, app, id);
  if (row.revokedAt) throw revokedConflict(row);
  if (row.expiresAt !== null && Date.parse(row.expiresAt) <= now) {
    throw new RelayError("conflict", "This credential has expired; mint a new one instead of rotating it.", { credential_id: row.id, expires_at: row.expiresAt });
  }
  const overlap = Math.min(overlapSeconds ?? ROTATION_DEFAULT_OVERLAP_SECONDS, config(env).limits.CREDENTIAL_MAX_OVERLAP_SECONDS);
  let previousExpiresAt: string | null = null;
  if (overlap > 0) {
    const end = row.expiresAt === null ? now + overlap * 1000 : Math.min(now + overlap * 1000, Date.parse(row.expiresAt));
    previousExpiresAt = new Date(end).toISOString();
  }
  const token = mintSecret("serviceCredential");
  const updated = await rotateCredential(env, row, { tokenHash: await sha256Hex(token), tokenPrefix: token.slice(0, TOKEN_PREFIX_LENGTH) }, previousExpiresAt);
  if (!updated) {
    const fresh = await credentialOf(env, app, id);
    if (fresh.revokedAt) throw revokedConflict(fresh);
    throw new RelayError("conflict", "This credential was rotated by another request at the same moment; list it and try again.", { credential_id: id });
  }
  return { row: updated, token };
}
