/**
 * The relay's VAPID key pair for browser push (RFC 8292): one ECDSA P-256 key per relay.
 * - Production: the `VAPID_PRIVATE_KEY` secret, either the 32-byte private scalar in
 *   base64url (what `web-push generate-vapid-keys` prints as the private key) or a
 *   private JWK (`{"kty":"EC","crv":"P-256","d","x","y"}`). From a bare scalar the public
 *   point is computed here (d·G on P-256).
 * - Development (and only there) without the secret: generated with WebCrypto on first
 *   use and kept in D1 (`relay_keys`, name `vapid`), so it survives restarts and every
 *   isolate agrees.
 * The public key is served as the 65-byte uncompressed point in base64url — the form a
 * browser's `pushManager.subscribe({ applicationServerKey })` takes.
 */
import { config } from "../config";
import { nowIso } from "../auth/tokens";

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

// ---- P-256 arithmetic (only to derive a public point from a bare private scalar) ----

const P = 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn;
const N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const G: [bigint, bigint] = [
  0x6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296n,
  0x4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5n,
];

const mod = (a: bigint) => ((a % P) + P) % P;

function inverse(a: bigint): bigint {
  let [r0, r1, s0, s1] = [mod(a), P, 1n, 0n];
  while (r1 !== 0n) {
    const q = r0 / r1;
    [r0, r1] = [r1, r0 - q * r1];
    [s0, s1] = [s1, s0 - q * s1];
  }
  return mod(s0);
}

type Point = [bigint, bigint] | null;

function add(a: Point, b: Point): Point {
  if (!a) return b;
  if (!b) return a;
  if (a[0] === b[0] && mod(a[1] + b[1]) === 0n) return null;
  const slope = a[0] === b[0] && a[1] === b[1]
    ? mod((3n * a[0] * a[0] - 3n) * inverse(2n * a[1]))
    : mod((b[1] - a[1]) * inverse(b[0] - a[0]));
  const x = mod(slope * slope - a[0] - b[0]);
  return [x, mod(slope * (a[0] - x) - a[1])];
}

function multiply(k: bigint): Point {
  let result: Point = null;
  let addend: Point = G;
  while (k > 0n) {
    if (k & 1n) result = add(result, addend);
    addend = add(addend, addend);
    k >>= 1n;
  }
  return result;
}

function toBytes(n: bigint): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 31; i >= 0; i--) {
    out[i] = Number(n & 0xffn);
    n >>= 8n;
  }
  return out;
}

function fromBytes(bytes: Uint8Array): bigint {
  return bytes.reduce((n, b) => (n << 8n) | BigInt(b), 0n);
}

/** The private JWK for a bare 32-byte scalar; null when it is not a valid P-256 key. */
export function jwkFromScalar(d: Uint8Array): JsonWebKey | null {
  const k = fromBytes(d);
  if (d.byteLength !== 32 || k === 0n || k >= N) return null;
  const point = multiply(k)!;
  return { kty: "EC", crv: "P-256", d: b64urlEncode(d), x: b64urlEncode(toBytes(point[0])), y: b64urlEncode(toBytes(point[1])), ext: true };
}

async function checked(jwk: JsonWebKey): Promise<VapidKeys | null> {
  if (jwk.kty !== "EC" || jwk.crv !== "P-256" || typeof jwk.d !== "string" || typeof jwk.x !== "string" || typeof jwk.y !== "string") return null;
  const x = base64urlBytes(jwk.x);
  const y = base64urlBytes(jwk.y);
  if (!x || !y || x.byteLength !== 32 || y.byteLength !== 32) return null;
  try {
    // Importing proves the three parts are one key; a mismatched x/y is refused here.
    await crypto.subtle.importKey("jwk", { kty: "EC", crv: "P-256", d: jwk.d, x: jwk.x, y: jwk.y }, { name: "ECDSA", namedCurve: "P-256" }, false, ["sign"]);
  } catch {
    return null;
  }
  const raw = new Uint8Array(65);
  raw[0] = 4;
  raw.set(x, 1);
  raw.set(y, 33);
  return { publicKey: b64urlEncode(raw), jwk: { kty: "EC", crv: "P-256", d: jwk.d, x: jwk.x, y: jwk.y } };
}

/** Parses the VAPID_PRIVATE_KEY secret (scalar or JWK); null when it is neither. */
export async function parseVapidSecret(secret: string): Promise<VapidKeys | null> {
  const text = secret.trim();
  if (text.startsWith("{")) {
    try {
      return await checked(JSON.parse(text) as JsonWebKey);
    } catch {
      return null;
    }
  }
  const d = base64urlBytes(text);
  const jwk = d ? jwkFromScalar(d) : null;
  return jwk ? checked(jwk) : null;
}

const parsed = new Map<string, Promise<VapidKeys | null>>();

async function developmentKeys(env: { DB: D1Database }): Promise<VapidKeys | null> {
  const stored = await env.DB.prepare("SELECT value FROM relay_keys WHERE name = 'vapid'").first<string>("value");
  if (stored) return checked(JSON.parse(stored) as JsonWebKey);
  const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]) as CryptoKeyPair;
  const jwk = await crypto.subtle.exportKey("jwk", pair.privateKey) as JsonWebKey;
  // Two isolates may generate at once: the first insert wins and both read it back.
  await env.DB.prepare("INSERT INTO relay_keys (name, value, created_at) VALUES ('vapid', ?1, ?2) ON CONFLICT (name) DO NOTHING")
    .bind(JSON.stringify({ kty: "EC", crv: "P-256", d: jwk.d, x: jwk.x, y: jwk.y }), nowIso()).run();
  const winner = await env.DB.prepare("SELECT value FROM relay_keys WHERE name = 'vapid'").first<string>("value");
  return winner ? checked(JSON.parse(winner) as JsonWebKey) : null;
}

/** The relay's VAPID keys, or the reason there are none (production without a usable secret). */
export async function vapidKeys(env: { DB: D1Database }): Promise<VapidKeys | VapidProblem> {
  const secret = (env as { VAPID_PRIVATE_KEY?: unknown }).VAPID_PRIVATE_KEY;
  if (typeof secret === "string" && secret.trim() !== "") {
    let keys = parsed.get(secret);
    if (!keys) {
      keys = parseVapidSecret(secret);
      parsed.set(secret, keys);
    }
    return (await keys) ?? "vapid_key_invalid";
  }
  if (!config(env).development) return "vapid_key_missing";
  return (await developmentKeys(env)) ?? "vapid_key_invalid";
}
