/**
 * The keys behind the app origins' signed credentials (app sessions, visitor tokens, asset
 * passes): each derived from APP_SESSION_SECRET with its own label, so one credential can
 * never be passed off as another. Without a secret (production with APP_SESSION_SECRET
 * unset) there are no keys: nothing is signed or accepted, and callers answer 503. The JWT
 * helpers here are the one way app-session and visitor tokens are signed and checked.
 */
import { SignJWT, jwtVerify, errors as joseErrors, type JWTPayload } from "jose";
import { config } from "../config";

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

/** An HS256 JWT with these claims for `subject` and `audience`, issued at `now` and expiring at `exp` (seconds). */
export function signJwt(key: Uint8Array, claims: JWTPayload, subject: string, audience: string, now: number, exp: number): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(subject)
    .setAudience(audience)
    .setIssuedAt(now)
    .setExpirationTime(exp)
    .sign(key);
}

/** The payload of a valid, unexpired HS256 JWT for `audience`; null for anything else (too long, misshapen, forged, expired). */
export async function verifiedJwt(key: Uint8Array, token: string, audience: string, maxLength: number): Promise<JWTPayload | null> {
  if (token.length > maxLength || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token)) return null;
  try {
    return (await jwtVerify(token, key, { algorithms: ["HS256"], audience })).payload;
  } catch (err) {
    if (err instanceof joseErrors.JOSEError) return null;
    throw err;
  }
}
