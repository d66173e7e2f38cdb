/**
 * Asset passes: a short HMAC over (app, share-token hash, path, expiry) that the served
 * document's asset URLs carry as `?svc_pass=`, because an <img> cannot send a header. A
 * pass opens one path of one gated app for about two hours, and rotating a link app's
 * share token voids every pass minted under the old one.
 */
import { constantTimeEqual } from "./tokens";

/** Asset passes last about two hours, rounded to 10-minute steps so URLs repeat between reloads. */
export const ASSET_PASS_TTL_SECONDS = 2 * 3600;
const ASSET_PASS_STEP_SECONDS = 600;

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
  return constantTimeEqual(await passSignature(keys, appId, shareHash, path, exp), match[2]);
}
