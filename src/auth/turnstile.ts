/**
 * Bot challenges for anonymous writes to `antiAbuse` collections (spec B rule 11, WIRE
 * §4.4): the page sends a Turnstile token in `x-service-challenge`; the relay checks it
 * with Turnstile's siteverify and tells the AppStore the outcome. Turnstile tokens are
 * single-use and short-lived on its side. When the challenge service cannot be reached
 * the check fails open (WIRE §4.4), so an outage never locks visitors out.
 *
 * Development mode never leaves the machine: Turnstile's documented test token
 * (`XXXX.DUMMY.TOKEN.XXXX`, what its test site keys produce) passes, anything else fails.
 */
import { config } from "../config";
import { constantTimeEqual } from "./tokens";

export type ChallengeOutcome = "verified" | "absent" | "failed";

export const TEST_TOKEN = "XXXX.DUMMY.TOKEN.XXXX";
const SITEVERIFY = "https://challenges.cloudflare.com/turnstile/v0/siteverify";
const TIMEOUT_MS = 5_000;

export async function challengeOutcome(env: Env, token: string | undefined, ip: string): Promise<ChallengeOutcome> {
  if (!token) return "absent";
  if (token.length > 2048) return "failed";
  const cfg = config(env);
  const secret = (env as unknown as { TURNSTILE_SECRET_KEY?: string }).TURNSTILE_SECRET_KEY;
  if (cfg.development && !secret) return constantTimeEqual(token, TEST_TOKEN) ? "verified" : "failed";
  if (!secret) return "failed";
  try {
    const res = await fetch(SITEVERIFY, {
      method: "POST",
      body: new URLSearchParams({ secret, response: token, ...(ip !== "unknown" ? { remoteip: ip } : {}) }),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    if (!res.ok) return "verified";
    const result = (await res.json()) as { success?: unknown };
    return result.success === true ? "verified" : "failed";
  } catch {
    return "verified";
  }
}
