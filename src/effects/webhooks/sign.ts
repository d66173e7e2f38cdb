/**
 * The outbound signature (WIRE §6.1): `X-Service-Signature: t=<unix seconds>,v1=<hex>…`,
 * each `v1` the lower-case hex HMAC-SHA256 of `<t>.<raw body>` keyed with one live secret
 * verbatim (the `whsec_` prefix included), one per live secret: two during a rotation's
 * grace window, so a receiver holding either verifies.
 */
const encoder = new TextEncoder();

/** Lower-case hex HMAC-SHA256 of `message` (text as UTF-8, or raw bytes) keyed with `secret` verbatim; inbound hooks verify with it too. */
export async function hmacHex(secret: string, message: string | Uint8Array): Promise<string> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, typeof message === "string" ? encoder.encode(message) : message));
  return [...mac].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

export async function signatureHeader(secrets: readonly string[], timestampSeconds: number, body: string): Promise<string> {
  const signed = `${timestampSeconds}.${body}`;
  const macs = await Promise.all(secrets.map((secret) => hmacHex(secret, signed)));
  return [`t=${timestampSeconds}`, ...macs.map((mac) => `v1=${mac}`)].join(",");
}
