/**
 * App sessions: how a signed-in person (the owner or a member) is known on an app's own
 * origin, which has no cookies. The token is a JWT (HS256, jose) naming the app, the human
 * and the access kind, valid 7 days, kept by the page in localStorage and sent as
 * `Authorization: Bearer` (or the `service.session.<token>` socket subprotocol). Only the
 * signature, expiry and issue time are trusted from it: access is re-checked on every
 * request (app-access.ts). Besides the whole-second `iat` it carries `iat_ms`, the issue
 * time in milliseconds, so a session can be told apart from a membership begun the same
 * second. `POST /_svc/session` mints one in exchange for a sign-in grant
 * (`appSessionFromGrant`).
 */
import { RelayError } from "../errors";
import type { AppRow } from "../db/apps";
import { consumeGrant } from "../db/sign-in-grants";
import { appAccessFor, type AppAccess, type AppAccessKind } from "./app-access";
import { signJwt, verifiedJwt } from "./signing-keys";

export const APP_SESSION_TTL_SECONDS = 7 * 24 * 3600;
const AUDIENCE = "service-app-session";

export interface AppSessionClaims {
  appId: string;
  humanId: string;
  kind: AppAccessKind;
  /**
   * Milliseconds since the epoch: access checks refuse sessions not newer than the current
   * membership. From `iat_ms`; a token minted before that claim existed gives `iat` × 1000,
   * the earliest it can have been issued, so it is never taken for newer than it is.
   */
  issuedAtMs: number;
  expiresAt: string;
}

export async function signAppSession(keys: { session: Uint8Array }, appId: string, humanId: string, kind: AppAccessKind): Promise<{ token: string; expiresAt: string }> {
  const nowMs = Date.now();
  const now = Math.floor(nowMs / 1000);
  const exp = now + APP_SESSION_TTL_SECONDS;
  const token = await signJwt(keys.session, { app: appId, kind, iat_ms: nowMs }, humanId, AUDIENCE, now, exp);
  return { token, expiresAt: new Date(exp * 1000).toISOString() };
}

/** The claims of a valid, unexpired token for `appId`; null for anything else. */
export async function verifyAppSession(keys: { session: Uint8Array }, token: string, appId: string): Promise<AppSessionClaims | null> {
  const payload = await verifiedJwt(keys.session, token, AUDIENCE, 4096);
  if (!payload) return null;
  if (payload.app !== appId || typeof payload.sub !== "string" || (payload.kind !== "owner" && payload.kind !== "member") || typeof payload.exp !== "number" || typeof payload.iat !== "number") return null;
  // iat_ms must agree with iat (same second); anything else is ignored in favour of iat.
  const ms = payload.iat_ms;
  const issuedAtMs = typeof ms === "number" && Number.isSafeInteger(ms) && Math.floor(ms / 1000) === payload.iat ? ms : payload.iat * 1000;
  return { appId, humanId: payload.sub, kind: payload.kind, issuedAtMs, expiresAt: new Date(payload.exp * 1000).toISOString() };
}

/**
 * A presented app session resolved to the person and their access now: the token's
 * claims and the owner's or member's access, or null when the token does not verify for
 * this app or its person has no access any more (or not since before it was issued).
 */
export async function appSessionAccess(env: { DB: D1Database }, keys: { session: Uint8Array }, app: AppRow, token: string): Promise<{ claims: AppSessionClaims; access: AppAccess } | null> {
  const claims = await verifyAppSession(keys, token, app.id);
  const access = claims ? await appAccessFor(env, app, claims.humanId, { sessionIssuedAtMs: claims.issuedAtMs }) : null;
  return claims && access ? { claims, access } : null;
}

/**
 * Trades a one-time sign-in grant (src/db/sign-in-grants.ts, from /authorize or a
 * test-session token) for an app session on `app`: 401 `grant_invalid` when the grant is
 * unknown, spent, expired or for another app; 403 `forbidden` when its person has lost
 * access since. Access is decided now, at redemption.
 */
export async function appSessionFromGrant(
  env: { DB: D1Database }, keys: { session: Uint8Array }, app: AppRow, grant: string,
): Promise<{ token: string; expiresAt: string; humanId: string; kind: AppAccessKind }> {
  const spent = await consumeGrant(env, grant, app.id);
  if (!spent) throw new RelayError("grant_invalid", "This sign-in grant is unknown, already used, expired or for another app; sign in again.");
  const access = await appAccessFor(env, app, spent.humanId);
  if (!access) throw new RelayError("forbidden", "This account no longer has access to this app.");
  const { token, expiresAt } = await signAppSession(keys, app.id, spent.humanId, access.kind);
  return { token, expiresAt, humanId: spent.humanId, kind: access.kind };
}
