/**
 * Visitor tokens (WIRE §5.2): a JWT naming the app and a minted visitor id, valid a year,
 * that a browser keeps to be the same anonymous visitor on a public or link app whose
 * manifest needs visitor identity. Sent as `x-service-visitor` (or the
 * `service.visitor.<token>` socket subprotocol). It identifies; it never opens a gated app,
 * and a stale one only means "mint a new one".
 */
import { signJwt, signingKeys, verifiedJwt } from "./signing-keys";

const AUDIENCE = "service-visitor";
export const VISITOR_TTL_SECONDS = 365 * 24 * 3600;

/** A fresh visitor identity for `appId`: `v_` + 128 random bits, and the token that proves it. */
export async function signVisitor(keys: { visitor: Uint8Array }, appId: string): Promise<{ token: string; visitorId: string; expiresAt: string }> {
  const visitorId = `v_${[...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
  const now = Math.floor(Date.now() / 1000);
  const exp = now + VISITOR_TTL_SECONDS;
  const token = await signJwt(keys.visitor, { app: appId }, visitorId, AUDIENCE, now, exp);
  return { token, visitorId, expiresAt: new Date(exp * 1000).toISOString() };
}

/** The visitor id a valid, unexpired visitor token for `appId` names; null for anything else. */
export async function verifyVisitor(keys: { visitor: Uint8Array }, token: string, appId: string): Promise<string | null> {
  const payload = await verifiedJwt(keys.visitor, token, AUDIENCE, 2048);
  if (!payload || payload.app !== appId || typeof payload.sub !== "string" || !/^v_[0-9a-f]{32}$/.test(payload.sub)) return null;
  return payload.sub;
}

/** The visitor id a presented token proves on `appId`; null with no token, no signing secret on this relay, or a token that does not hold. */
export async function presentedVisitorId(env: object, token: string | undefined, appId: string): Promise<string | null> {
  const keys = signingKeys(env);
  if (!token || !keys) return null;
  return verifyVisitor(await keys, token, appId);
}
