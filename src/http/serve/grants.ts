/**
 * One-time sign-in grants: `/authorize` on the API origin mints one for a person with
 * access and sends it to the app origin in the `#svc_grant=` fragment; the page trades it
 * once, within two minutes, at `POST /_svc/session` on that same app for an app-session
 * token. Only the sha256 is stored; consuming is one conditional UPDATE, so two racing
 * exchanges cannot both win.
 */
import { sha256Hex, randomHex, nowIso } from "../../auth/tokens";

type Env = { DB: D1Database };

export const GRANT_TTL_SECONDS = 120;
export const GRANT_PREFIX = "sgr_";

export async function mintGrant(env: Env, appId: string, humanId: string): Promise<string> {
  const grant = GRANT_PREFIX + randomHex(16);
  const now = Date.now();
  await env.DB.batch([
    // Spent and expired grants are useless; dropping them here keeps the table small.
    env.DB.prepare("DELETE FROM app_session_grants WHERE expires_at < ?1").bind(new Date(now - 3600_000).toISOString()),
    env.DB.prepare("INSERT INTO app_session_grants (grant_hash, app_id, human_id, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)")
      .bind(await sha256Hex(grant), appId, humanId, new Date(now).toISOString(), new Date(now + GRANT_TTL_SECONDS * 1000).toISOString()),
  ]);
  return grant;
}

/** Spends the grant if it is unused, unexpired and for `appId`; returns the human it names. */
export async function consumeGrant(env: Env, grant: string, appId: string): Promise<{ humanId: string } | null> {
  if (!new RegExp(`^${GRANT_PREFIX}[0-9a-f]{32}$`).test(grant)) return null;
  const now = nowIso();
  const row = await env.DB.prepare(
    "UPDATE app_session_grants SET used_at = ?1 WHERE grant_hash = ?2 AND app_id = ?3 AND used_at IS NULL AND expires_at > ?1 RETURNING human_id",
  ).bind(now, await sha256Hex(grant), appId).first<{ human_id: string }>();
  return row ? { humanId: row.human_id } : null;
}
