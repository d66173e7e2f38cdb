/**
 * Sealing the secrets of outbound connections at rest (DESIGN §2: connections' secrets
 * AES-GCM encrypted): an AES-256-GCM key derived with HKDF from the CONNECTIONS_KEY
 * Worker secret, a fresh 96-bit IV per value, and the value's place (which connection,
 * which field) as additional data, so a sealed value copied into another row or field
 * does not open. Without a key (production with CONNECTIONS_KEY unset) connections are
 * refused rather than stored in the clear. Fingerprints are what the API shows instead of
 * a secret: the first 8 hex of its sha256.
 */
import { RelayError } from "../errors";
import { config } from "../config";
import { sha256Hex } from "../auth/tokens";

const FORMAT = "v1";
const IV_BYTES = 12;

const keyCache = new Map<string, Promise<CryptoKey>>();

function deriveKey(secret: string): Promise<CryptoKey> {
  let key = keyCache.get(secret);
  if (!key) {
    key = (async () => {
      const material = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), "HKDF", false, ["deriveKey"]);
      return crypto.subtle.deriveKey(
        { name: "HKDF", hash: "SHA-256", salt: new TextEncoder().encode("relay connections"), info: new TextEncoder().encode("connection-secrets/v1") },
        material, { name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"],
      );
    })();
    keyCache.set(secret, key);
  }
  return key;
}

/** The sealing key, or the refusal when the relay has no CONNECTIONS_KEY. */
function sealingKey(env: object): Promise<CryptoKey> {
  const secret = config(env).connectionsKey;
  if (!secret) {
    throw new RelayError("not_implemented", "Connections are not set up on this relay yet: the operator must set the CONNECTIONS_KEY secret.", { reason: "connections_key_missing" });
  }
  return deriveKey(secret);
}

function toBase64Url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): Uint8Array {
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
}

/** Where a sealed value belongs: `<owner id>:<field>`; opening it anywhere else fails. */
export function sealedPlace(ownerId: string, field: string): string {
  return `${ownerId}:${field}`;
}

export async function seal(env: object, place: string, value: string): Promise<string> {
  const key = await sealingKey(env);
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const sealed = new Uint8Array(await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: new TextEncoder().encode(place) }, key, new TextEncoder().encode(value),
  ));
  const joined = new Uint8Array(IV_BYTES + sealed.byteLength);
  joined.set(iv);
  joined.set(sealed, IV_BYTES);
  return `${FORMAT}.${toBase64Url(joined)}`;
}

/** The value sealed for `place`; throws when the key, the place or the bytes are not the ones it was sealed with. */
export async function unseal(env: object, place: string, sealed: string): Promise<string> {
  const key = await sealingKey(env);
  const [format, body] = sealed.split(".");
  if (format !== FORMAT || !body) throw new Error(`sealed value of unknown format for ${place}`);
  const joined = fromBase64Url(body);
  const plain = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: joined.slice(0, IV_BYTES), additionalData: new TextEncoder().encode(place) }, key, joined.slice(IV_BYTES),
  );
  return new TextDecoder().decode(plain);
}

/** What the API shows for a secret: the first 8 hex of its sha256. */
export async function fingerprint(secret: string): Promise<string> {
  return (await sha256Hex(secret)).slice(0, 8);
}
