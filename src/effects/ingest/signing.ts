/**
 * An inbound hook's signing secret and the check it feeds (WIRE §2.7, §6.3; spec B): the
 * owner sets one (`ihk_…` minted and shown once, or supplied), the one it replaces keeps
 * verifying for a grace window (default 3600 s, at most 86400 s), and clearing removes
 * both. A rule with `verify: { scheme: "github" }` accepts a delivery only when
 * `X-Hub-Signature-256: sha256=<hex>` is the HMAC-SHA256 of the raw body under a live
 * secret, compared in constant time; with no secret set every delivery fails (fail-closed).
 */
import { eq } from "drizzle-orm";
import { db } from "../../db/client";
import { ingestHooks } from "../../db/ingest-schema";
import { RelayError } from "../../errors";
import { constantTimeEqual, randomHex } from "../../auth/tokens";
import { fingerprint } from "../../connections/sealing";
import { hmacHex } from "../webhooks/sign";
import { hookByName, type HookRow } from "./hooks";

export const SIGNING_GRACE_DEFAULT_SECONDS = 3600;
export const SIGNING_GRACE_MAX_SECONDS = 86_400;
export const SIGNATURE_HEADER = "x-hub-signature-256";

/** A minted signing secret: `ihk_` and 32 random hex characters. */
export function mintSigningSecret(): string {
  return `ihk_${randomHex(16)}`;
}

/**
 * Sets the hook's signing secret (the supplied one, or a minted one returned only now);
 * the current one, if any, keeps verifying for `graceSeconds` (0: not at all). Setting
 * again within a grace window replaces the retained one: never more than two live.
 */
export async function setSigningSecret(env: Env, appId: string, name: string, input: { secret?: string; graceSeconds: number }, now = Date.now()):
Promise<{ secret?: string; fingerprint: string; setAt: string }> {
  const hook = await hookByName(env, appId, name);
  const secret = input.secret ?? mintSigningSecret();
  const setAt = new Date(now).toISOString();
  const keepPrevious = hook.signingSecret !== null && input.graceSeconds > 0;
  const print = await fingerprint(secret);
  await db(env).update(ingestHooks).set({
    signingSecret: secret, signingFingerprint: print, signingSetAt: setAt,
    previousSigningSecret: keepPrevious ? hook.signingSecret : null,
    previousUntil: keepPrevious ? new Date(now + input.graceSeconds * 1000).toISOString() : null,
  }).where(eq(ingestHooks.id, hook.id));
  return { ...(input.secret === undefined ? { secret } : {}), fingerprint: print, setAt };
}

/** Clears the current secret, the previous one and its grace; idempotent. */
export async function clearSigningSecret(env: Env, appId: string, name: string): Promise<void> {
  const hook = await hookByName(env, appId, name);
  await db(env).update(ingestHooks).set({ signingSecret: null, signingFingerprint: null, signingSetAt: null, previousSigningSecret: null, previousUntil: null })
    .where(eq(ingestHooks.id, hook.id));
}

/** The secrets a signature may be made with now: the current one, and the previous while its grace lasts. */
function liveSecrets(hook: HookRow, now: number): string[] {
  if (hook.signingSecret === null) return [];
  const previousLive = hook.previousSigningSecret !== null && hook.previousUntil !== null && Date.parse(hook.previousUntil) > now;
  return previousLive ? [hook.signingSecret, hook.previousSigningSecret!] : [hook.signingSecret];
}

/**
 * Refuses a delivery whose signature is missing, malformed or wrong, or that arrives
 * before any secret is set, with the same 401 every time (the cause is not told).
 */
export async function requireSignature(hook: HookRow, header: string | null, rawBody: Uint8Array, now = Date.now()): Promise<void> {
  const secrets = liveSecrets(hook, now);
  const presented = /^sha256=([0-9a-fA-F]{64})$/.exec(header?.trim() ?? "")?.[1]?.toLowerCase();
  let valid = false;
  for (const secret of secrets) {
    const expected = await hmacHex(secret, rawBody);
    if (presented !== undefined && constantTimeEqual(expected, presented)) valid = true;
  }
  if (!valid) throw new RelayError("ingest_signature_invalid", "The delivery's signature did not verify.");
}

