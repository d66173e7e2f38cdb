// The two sides of a Web Push that a worker test plays, shared by the push tests: the
// browser (a real P-256 subscription key pair and auth secret made with WebCrypto, saved
// through /v1/self/push-subscriptions) and the push service (handed the request the
// relay built, through sendPush's `send` parameter or a digest's push transport, since a
// Worker cannot listen on a socket). The service verifies the VAPID token (ES256 with the
// relay's public key as /v1 serves it) and decrypts the aes128gcm body with the
// subscription's private key, written here from RFC 8291 and RFC 8188 rather than taken
// from the library.
import { env } from "cloudflare:test";
import { expect } from "vitest";
import { call, json, type SignedIn } from "../helpers";
import type { PushTarget } from "../../../src/effects/notify/push";

export function b64url(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function fromB64url(s: string): Uint8Array<ArrayBuffer> {
  const std = s.replace(/-/g, "+").replace(/_/g, "/");
  return Uint8Array.from(atob(std + "=".repeat((4 - (std.length % 4)) % 4)), (c) => c.charCodeAt(0));
}

const utf8 = (s: string): Uint8Array<ArrayBuffer> => new Uint8Array(new TextEncoder().encode(s));

function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}

/** A browser's side of a subscription: its ECDH key pair and auth secret. */
export interface Browser {
  target: PushTarget;
  privateKey: CryptoKey;
  publicRaw: Uint8Array<ArrayBuffer>;
  auth: Uint8Array<ArrayBuffer>;
}

let endpointCounter = 0;

export async function browser(endpoint = `https://push.example.com/send/${crypto.randomUUID()}-${++endpointCounter}`): Promise<Browser> {
  const pair = await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"]) as CryptoKeyPair;
  const publicRaw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey) as ArrayBuffer);
  const auth = crypto.getRandomValues(new Uint8Array(16));
  return { target: { endpoint, keys: { p256dh: b64url(publicRaw), auth: b64url(auth) } }, privateKey: pair.privateKey, publicRaw, auth };
}

async function hkdf(salt: Uint8Array<ArrayBuffer>, ikm: Uint8Array<ArrayBuffer>, info: Uint8Array<ArrayBuffer>, bits: number): Promise<Uint8Array<ArrayBuffer>> {
  const key = await crypto.subtle.importKey("raw", ikm, "HKDF", false, ["deriveBits"]);
  return new Uint8Array(await crypto.subtle.deriveBits({ name: "HKDF", hash: "SHA-256", salt, info }, key, bits));
}

/** RFC 8291 §3.4 and RFC 8188 §2: the plaintext of an aes128gcm push body, as the browser recovers it. */
export async function decrypt(who: Browser, body: Uint8Array<ArrayBuffer>): Promise<string> {
  const salt = body.slice(0, 16);
  const recordSize = new DataView(body.buffer, body.byteOffset + 16, 4).getUint32(0);
  const idLength = body[20];
  expect(idLength).toBe(65);
  const serverPublic = body.slice(21, 21 + idLength);
  const record = body.slice(21 + idLength);
  expect(record.byteLength).toBeLessThanOrEqual(recordSize);
  const server = await crypto.subtle.importKey("raw", serverPublic, { name: "ECDH", namedCurve: "P-256" }, false, []);
  // WebCrypto's ECDH parameter is `public` (the Workers types spell it `$public`).
  const ecdh = { name: "ECDH", public: server } as unknown as SubtleCryptoDeriveKeyAlgorithm;
  const shared = new Uint8Array(await crypto.subtle.deriveBits(ecdh, who.privateKey, 256));
  const ikm = await hkdf(who.auth, shared, concat(utf8("WebPush: info\0"), who.publicRaw, serverPublic), 256);
  const cek = await hkdf(salt, ikm, utf8("Content-Encoding: aes128gcm\0"), 128);
  const nonce = await hkdf(salt, ikm, utf8("Content-Encoding: nonce\0"), 96);
  const key = await crypto.subtle.importKey("raw", cek, "AES-GCM", false, ["decrypt"]);
  const padded = new Uint8Array(await crypto.subtle.decrypt({ name: "AES-GCM", iv: nonce }, key, record));
  // The last record ends with the 0x02 delimiter followed only by zero padding.
  let end = padded.byteLength - 1;
  while (end >= 0 && padded[end] === 0) end -= 1;
  expect(padded[end]).toBe(2);
  return new TextDecoder().decode(padded.slice(0, end));
}

export interface VapidClaims { aud: string; exp: number; sub: string }

/** RFC 8292: `Authorization: vapid t=<JWT>, k=<public key>`, the JWT ES256-signed by that key. */
export async function verifyVapid(header: string | null, relayPublicKey: string): Promise<VapidClaims> {
  const match = /^vapid t=([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+), k=([A-Za-z0-9_-]+)$/.exec(header ?? "");
  expect(match, String(header)).not.toBeNull();
  const [, jwt, k] = match!;
  expect(k).toBe(relayPublicKey);
  const [head, claims, signature] = jwt.split(".");
  expect(JSON.parse(new TextDecoder().decode(fromB64url(head)))).toMatchObject({ alg: "ES256", typ: "JWT" });
  const key = await crypto.subtle.importKey("raw", fromB64url(relayPublicKey), { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"]);
  const valid = await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, key, fromB64url(signature), utf8(`${head}.${claims}`));
  expect(valid).toBe(true);
  return JSON.parse(new TextDecoder().decode(fromB64url(claims))) as VapidClaims;
}

export interface Received {
  url: string;
  method: string;
  headers: Headers;
  claims: VapidClaims;
  payload: unknown;
}

/**
 * A push service for one browser: checks and decrypts each request and answers `status`
 * (with `headers`). What it received is kept in `received`.
 */
export function pushService(who: Browser, relayPublicKey: string, status = 201, headers: Record<string, string> = {}) {
  const received: Received[] = [];
  const send = async (request: Request): Promise<Response> => {
    const claims = await verifyVapid(request.headers.get("authorization"), relayPublicKey);
    const body = new Uint8Array(await request.arrayBuffer());
    received.push({ url: request.url, method: request.method, headers: request.headers, claims, payload: JSON.parse(await decrypt(who, body)) });
    return new Response(status === 201 ? null : "push service says no", { status, headers });
  };
  return { send, received };
}

export async function relayPublicKey(human: SignedIn): Promise<string> {
  return (await json<{ public_key: string }>(await call("/v1/self/push-subscription/vapid-public-key", { session: human.session }), 200)).public_key;
}

export async function saved(human: SignedIn, who: Browser): Promise<void> {
  await json(await call("/v1/self/push-subscriptions", { session: human.session, json: { endpoint: who.target.endpoint, expirationTime: null, keys: who.target.keys } }), 201);
}

/** The person a saved subscription belongs to, or null once it is gone. */
export async function rowFor(endpoint: string): Promise<unknown> {
  return env.DB.prepare("SELECT human_id FROM push_subscriptions WHERE endpoint = ?1").bind(endpoint).first("human_id");
}
