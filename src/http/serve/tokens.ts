/**
 * The two signed credentials of app origins, both keyed by APP_SESSION_SECRET (with a
 * separate derived key each, so one can never be passed off as the other):
 * - the app-session token: a JWT (HS256, jose) naming the app, the human and the access
 *   kind, valid 7 days, kept by the page in localStorage and sent as `Authorization:
 *   Bearer`; only the signature, expiry and issue time are trusted from it, access is
 *   re-checked. Besides the whole-second `iat` it carries `iat_ms`, the issue time in
 *   milliseconds, so a session can be told apart from a membership begun the same second;
 * - the asset pass: a short HMAC over (app, share-token hash, path, expiry) that the
 *   served document's asset URLs carry as `?svc_pass=`, because an <img> cannot send a
 *   header. It opens one path of one app, and rotating a link app's share token voids it;
 * - the visitor token: a JWT naming the app and a minted visitor id, valid a year, that a
 *   browser keeps to be the same anonymous visitor on a public or link app whose manifest
 *   needs visitor identity (WIRE §5.2). It identifies; it never opens a gated app.
 * Without a secret (production with APP_SESSION_SECRET unset) nothing is signed or
 * accepted: callers get `null` and answer 503.
 */
import { SignJWT, jwtVerify, errors as joseErrors } from "jose";
import { config } from "../../config";
import type { AppAccessKind } from "./access";

export const APP_SESSION_TTL_SECONDS = 7 * 24 * 3600;
/** Asset passes last about two hours, rounded to 10-minute steps so URLs repeat between reloads. */
export const ASSET_PASS_TTL_SECONDS = 2 * 3600;
const ASSET_PASS_STEP_SECONDS = 600;
const AUDIENCE = "service-app-session";
const VISITOR_AUDIENCE = "service-visitor";
export const VISITOR_TTL_SECONDS = 365 * 24 * 3600;

export interface SigningKeys {
  session: Uint8Array;
  assets: CryptoKey;
  visitor: Uint8Array;
}

const keyCache = new Map<string, Promise<SigningKeys>>();

async function hmacKey(raw: Uint8Array): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
}

async function derive(secret: string, label: string): Promise<Uint8Array> {
  const key = await hmacKey(new TextEncoder().encode(secret));
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(label)));
}

/** The derived keys, or null when no secret is configured (see config.appSessionSecret). */
export function signingKeys(env: object): Promise<SigningKeys> | null {
  const secret = config(env).appSessionSecret;
  if (!secret) return null;
  let keys = keyCache.get(secret);
  if (!keys) {
    keys = (async () => ({
      session: await derive(secret, "app-session/v1"),
      assets: await hmacKey(await derive(secret, "asset-pass/v1")),
      visitor: await derive(secret, "visitor/v1"),
    }))();
    keyCache.set(secret, keys);
  }
  return keys;
}

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
  const token = await new SignJWT({ app: appId, kind, iat_ms: nowMs })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(humanId)
    .setAudience(AUDIENCE)
    .setIssuedAt(now)
    .setExpirationTime(exp)
    .sign(keys.session);
  return { token, expiresAt: new Date(exp * 1000).toISOString() };
}

/** The claims of a valid, unexpired token for `appId`; null for anything else. */
export async function verifyAppSession(keys: { session: Uint8Array }, token: string, appId: string): Promise<AppSessionClaims | null> {
  if (token.length > 4096 || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token)) return null;
  try {
    const { payload } = await jwtVerify(token, keys.session, { algorithms: ["HS256"], audience: AUDIENCE });
    if (payload.app !== appId || typeof payload.sub !== "string" || (payload.kind !== "owner" && payload.kind !== "member") || typeof payload.exp !== "number" || typeof payload.iat !== "number") return null;
    // iat_ms must agree with iat (same second); anything else is ignored in favour of iat.
    const ms = payload.iat_ms;
    const issuedAtMs = typeof ms === "number" && Number.isSafeInteger(ms) && Math.floor(ms / 1000) === payload.iat ? ms : payload.iat * 1000;
    return { appId, humanId: payload.sub, kind: payload.kind, issuedAtMs, expiresAt: new Date(payload.exp * 1000).toISOString() };
  } catch (err) {
    if (err instanceof joseErrors.JOSEError) return null;
    throw err;
  }
}

/** A fresh visitor identity for `appId`: `v_` + 128 random bits, and the token that proves it. */
export async function signVisitor(keys: { visitor: Uint8Array }, appId: string): Promise<{ token: string; visitorId: string; expiresAt: string }> {
  const visitorId = `v_${[...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
  const now = Math.floor(Date.now() / 1000);
  const exp = now + VISITOR_TTL_SECONDS;
  const token = await new SignJWT({ app: appId })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(visitorId)
    .setAudience(VISITOR_AUDIENCE)
    .setIssuedAt(now)
    .setExpirationTime(exp)
    .sign(keys.visitor);
  return { token, visitorId, expiresAt: new Date(exp * 1000).toISOString() };
}

/** The visitor id a valid, unexpired visitor token for `appId` names; null for anything else. */
export async function verifyVisitor(keys: { visitor: Uint8Array }, token: string, appId: string): Promise<string | null> {
  if (token.length > 2048 || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token)) return null;
  try {
    const { payload } = await jwtVerify(token, keys.visitor, { algorithms: ["HS256"], audience: VISITOR_AUDIENCE });
    if (payload.app !== appId || typeof payload.sub !== "string" || !/^v_[0-9a-f]{32}$/.test(payload.sub)) return null;
    return payload.sub;
  } catch (err) {
    if (err instanceof joseErrors.JOSEError) return null;
    throw err;
  }
}

function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function passMessage(appId: string, shareHash: string | null, path: string, exp: number): Uint8Array {
  return new TextEncoder().encode(`asset-pass\n${appId}\n${shareHash ?? ""}\n${path}\n${exp}`);
}

async function passSignature(keys: { assets: CryptoKey }, appId: string, shareHash: string | null, path: string, exp: number): Promise<string> {
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", keys.assets, passMessage(appId, shareHash, path, exp)));
  return base64url(mac.slice(0, 18));
}

/** A pass for one asset path: `<expiry seconds, base 36>.<signature>`. */
export async function mintAssetPass(keys: { assets: CryptoKey }, appId: string, shareHash: string | null, path: string, nowMs = Date.now()): Promise<string> {
  const now = Math.floor(nowMs / 1000);
  const exp = Math.ceil((now + ASSET_PASS_TTL_SECONDS) / ASSET_PASS_STEP_SECONDS) * ASSET_PASS_STEP_SECONDS;
  return `${exp.toString(36)}.${await passSignature(keys, appId, shareHash, path, exp)}`;
}

export async function assetPassValid(keys: { assets: CryptoKey }, pass: string, appId: string, shareHash: string | null, path: string): Promise<boolean> {
  const match = /^([0-9a-z]{1,10})\.([A-Za-z0-9_-]{24})$/.exec(pass);
  if (!match) return false;
  const exp = parseInt(match[1], 36);
  if (!Number.isSafeInteger(exp) || exp * 1000 <= Date.now()) return false;
  const expected = await passSignature(keys, appId, shareHash, path, exp);
  const a = new TextEncoder().encode(expected);
  const b = new TextEncoder().encode(match[2]);
  return a.byteLength === b.byteLength && crypto.subtle.timingSafeEqual(a, b);
}
