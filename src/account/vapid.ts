/**
 * The relay's VAPID key pair for browser push (RFC 8292): one ECDSA P-256 key per relay.
 * - Production: the `VAPID_PRIVATE_KEY` secret, either the 32-byte private scalar in
 *   base64url (what `web-push generate-vapid-keys` prints as the private key) or a
 *   private JWK (`{"kty":"EC","crv":"P-256","d","x","y"}`). From a bare scalar WebCrypto
 *   derives the public point (a PKCS#8 import without one).
 * - Development (and only there) without the secret: generated with WebCrypto on first
 *   use and kept in D1 (`relay_keys`, name `vapid`), so it survives restarts and every
 *   isolate agrees.
 * The public key is served as the 65-byte uncompressed point in base64url — the form a
 * browser's `pushManager.subscribe({ applicationServerKey })` takes.
 * Signing is the Web Push library's (@block65/webcrypto-web-push): a key counts as valid
 * only once the library has imported it and signed a token with it, the same way every
 * push is signed (src/effects/notify/push.ts). The library has no key generation or
 * scalar import of its own, so those two stay plain WebCrypto.
 */
import { vapidHeaders, type VapidKeys as LibraryVapidKeys } from "@block65/webcrypto-web-push";
import { config } from "../config";
import { nowIso } from "../auth/tokens";
import { RelayError } from "../errors";

export interface VapidKeys {
  /** base64url of 0x04 ‖ x ‖ y. */
  publicKey: string;
  jwk: JsonWebKey;
}

export type VapidProblem = "vapid_key_missing" | "vapid_key_invalid";

function b64urlDecode(s: string): Uint8Array {
  const std = s.replace(/-/g, "+").replace(/_/g, "/");
  const bin = atob(std + "=".repeat((4 - (std.length % 4)) % 4));
  return Uint8Array.from(bin, (ch) => ch.charCodeAt(0));
}

export function b64urlEncode(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function base64urlBytes(s: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(s)) return null;
  try {
    return b64urlDecode(s.replace(/=+$/, ""));
  } catch {
    return null;
  }
}

/**
 * A bare P-256 private scalar wrapped as PKCS#8 (RFC 5208) around an ECPrivateKey (RFC
 * 5915) that leaves out its optional public key: importing it makes WebCrypto derive the
 * public point, and it refuses a scalar that is zero or not below the curve order.
 */
const PKCS8_P256_SCALAR_PREFIX = Uint8Array.of(
  0x30, 0x41, 0x02, 0x01, 0x00,
  0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07,
  0x04, 0x27, 0x30, 0x25, 0x02, 0x01, 0x01, 0x04, 0x20,
);

/** The private JWK for a bare 32-byte scalar; null when it is not a valid P-256 key. */
async function jwkFromScalar(d: Uint8Array): Promise<JsonWebKey | null> {
  if (d.byteLength !== 32) return null;
  const der = new Uint8Array(PKCS8_P256_SCALAR_PREFIX.byteLength + 32);
  der.set(PKCS8_P256_SCALAR_PREFIX);
  der.set(d, PKCS8_P256_SCALAR_PREFIX.byteLength);
  try {
    const key = await crypto.subtle.importKey("pkcs8", der, { name: "ECDSA", namedCurve: "P-256" }, true, ["sign"]);
    const jwk = await crypto.subtle.exportKey("jwk", key) as JsonWebKey;
    return { kty: "EC", crv: "P-256", d: jwk.d, x: jwk.x, y: jwk.y };
  } catch {
    return null;
  }
}

/** The keys as the push library signs with them: the public point, the private scalar and the VAPID `sub`. */
export function signingKeys(keys: VapidKeys, subject: string): LibraryVapidKeys {
  return { subject, publicKey: keys.publicKey, privateKey: keys.jwk.d };
}

/** Where the key check's throwaway token is addressed; nothing is ever sent there. */
const KEY_CHECK_TARGET = { endpoint: "https://vapid-key-check.invalid/", expirationTime: null, keys: { p256dh: "", auth: "" } };

async function checked(jwk: JsonWebKey): Promise<VapidKeys | null> {
  if (jwk.kty !== "EC" || jwk.crv !== "P-256" || typeof jwk.d !== "string" || typeof jwk.x !== "string" || typeof jwk.y !== "string") return null;
  const x = base64urlBytes(jwk.x);
  const y = base64urlBytes(jwk.y);
  if (!x || !y || x.byteLength !== 32 || y.byteLength !== 32) return null;
  const raw = new Uint8Array(65);
  raw[0] = 4;
  raw.set(x, 1);
  raw.set(y, 33);
  const keys: VapidKeys = { publicKey: b64urlEncode(raw), jwk: { kty: "EC", crv: "P-256", d: jwk.d, x: jwk.x, y: jwk.y } };
  try {
    // The push library imports the key and signs a token exactly as it does for every
    // push, so a key accepted here is one pushes can be sent with; a mismatched x/y is
    // refused by the import.
    await vapidHeaders(KEY_CHECK_TARGET, signingKeys(keys, "mailto:vapid-key-check@invalid"));
  } catch {
    return null;
  }
  return keys;
}

/** Parses the VAPID_PRIVATE_KEY secret (scalar or JWK); null when it is neither. */
export async function parseVapidSecret(secret: string): Promise<VapidKeys | null> {
  const text = secret.trim();
  if (text.startsWith("{")) return parseJwkText(text);
  const d = base64urlBytes(text);
  const jwk = d ? await jwkFromScalar(d) : null;
  return jwk ? checked(jwk) : null;
}

/** Checked keys by their source text (the secret or the stored JWK), so each is checked once per isolate. */
const parsed = new Map<string, Promise<VapidKeys | null>>();

function parsedOnce(text: string, parse: (text: string) => Promise<VapidKeys | null>): Promise<VapidKeys | null> {
  let keys = parsed.get(text);
  if (!keys) {
    keys = parse(text);
    parsed.set(text, keys);
  }
  return keys;
}

async function parseJwkText(text: string): Promise<VapidKeys | null> {
  try {
    return await checked(JSON.parse(text) as JsonWebKey);
  } catch {
    return null;
  }
}

async function developmentKeys(env: { DB: D1Database }): Promise<VapidKeys | null> {
  const stored = await env.DB.prepare("SELECT value FROM relay_keys WHERE name = 'vapid'").first<string>("value");
  if (stored) return parsedOnce(stored, parseJwkText);
  const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]) as CryptoKeyPair;
  const jwk = await crypto.subtle.exportKey("jwk", pair.privateKey) as JsonWebKey;
  // Two isolates may generate at once: the first insert wins and both read it back.
  await env.DB.prepare("INSERT INTO relay_keys (name, value, created_at) VALUES ('vapid', ?1, ?2) ON CONFLICT (name) DO NOTHING")
    .bind(JSON.stringify({ kty: "EC", crv: "P-256", d: jwk.d, x: jwk.x, y: jwk.y }), nowIso()).run();
  const winner = await env.DB.prepare("SELECT value FROM relay_keys WHERE name = 'vapid'").first<string>("value");
  return winner ? parsedOnce(winner, parseJwkText) : null;
}

/** The relay's VAPID keys, or the reason there are none (production without a usable secret). */
export async function vapidKeys(env: { DB: D1Database }): Promise<VapidKeys | VapidProblem> {
  const secret = (env as { VAPID_PRIVATE_KEY?: unknown }).VAPID_PRIVATE_KEY;
  if (typeof secret === "string" && secret.trim() !== "") {
    return (await parsedOnce(secret, parseVapidSecret)) ?? "vapid_key_invalid";
  }
  if (!config(env).development) return "vapid_key_missing";
  return (await developmentKeys(env)) ?? "vapid_key_invalid";
}

/** The public key a browser subscribes with, or `not_implemented` when push is not configured. */
export async function publicVapidKey(env: { DB: D1Database }): Promise<string> {
  const keys = await vapidKeys(env);
  if (typeof keys === "string") {
    throw new RelayError("not_implemented", "Browser push is not configured on this relay: the operator must set the VAPID_PRIVATE_KEY secret.", { reason: keys });
  }
  return keys.publicKey;
}
