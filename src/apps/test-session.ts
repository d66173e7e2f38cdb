/**
 * Test-session tokens (`POST /v1/apps/:id/test-session-tokens`): how a headless client —
 * a test runner, a screenshot bot, an agent's browser — gets an owner app session
 * without a person clicking through `/authorize`. The token IS a one-time sign-in grant
 * of the kind `/authorize` hands out (`sgr_` + 128 random bits, sha256 in
 * `app_session_grants`, bound to the app and to its owner), with a longer life: ten
 * minutes instead of two. So it is redeemed exactly like one — `POST /_svc/session
 * { grant }` on the app's own origin answers `{ token, expires_at, session }`, or opening
 * `<app url>#svc_grant=<token>` lets the gate shell or page script trade it — and it is
 * refused like one: spent, expired, for another app or forged answers 401
 * `grant_invalid` (a token presented on another app is not spent). Access is decided at
 * redemption, so a token minted before a transfer opens nothing for the old owner
 * (transfers also delete the app's unspent grants).
 */
import { GRANT_PREFIX } from "../http/serve/grants";
import { randomHex, sha256Hex } from "../auth/tokens";

export const TEST_SESSION_TTL_SECONDS = 600;

export async function mintTestSessionToken(env: { DB: D1Database }, appId: string, ownerHumanId: string): Promise<{ token: string; expiresAt: string }> {
  const token = GRANT_PREFIX + randomHex(16);
  const now = Date.now();
  const expiresAt = new Date(now + TEST_SESSION_TTL_SECONDS * 1000).toISOString();
  await env.DB.prepare("INSERT INTO app_session_grants (grant_hash, app_id, human_id, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)")
    .bind(await sha256Hex(token), appId, ownerHumanId, new Date(now).toISOString(), expiresAt).run();
  return { token, expiresAt };
}
