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
import { mintLongerGrant } from "../db/sign-in-grants";

export const TEST_SESSION_TTL_SECONDS = 600;

export async function mintTestSessionToken(env: { DB: D1Database }, appId: string, ownerHumanId: string): Promise<{ token: string; expiresAt: string }> {
  const { grant, expiresAt } = await mintLongerGrant(env, appId, ownerHumanId, TEST_SESSION_TTL_SECONDS);
  return { token: grant, expiresAt };
}
