/**
 * One-time sign-in grants in D1 (`app_session_grants`): `/authorize` on the API origin
 * mints one for a person with access and sends it to the app origin in the `#svc_grant=`
 * fragment; the page trades it once, within two minutes, at `POST /_svc/session` on that
 * same app for an app-session token. A test-session token (src/apps/test-session.ts) is
 * the same kind of grant with a longer life. Only the sha256 is stored; consuming is one
 * conditional UPDATE, so two racing exchanges cannot both win.
 */
import { sha256Hex, randomHex, nowIso } from "../auth/tokens";

type Env = { DB: D1Database };

export const GRANT_TTL_SECONDS = 120;
export const GRANT_PREFIX = "sgr_";

/** A fresh grant for (app, human) valid for `ttlSeconds`, and the statement that stores it. */
async function grantInsert(env: Env, appId: string, humanId: string, ttlSeconds: number): Promise<{ grant: string; expiresAt: string; insert: D1PreparedStatement }> {
  const grant = GRANT_PREFIX + randomHex(16);
  const now = Date.now();
  const expiresAt = new Date(now + ttlSeconds * 1000).toISOString();
  const insert = env.DB.prepare("INSERT INTO app_session_grants (grant_hash, app_id, human_id, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)")
    .bind(await sha256Hex(grant), appId, humanId, new Date(now).toISOString(), expiresAt);
  return { grant, expiresAt, insert };
}

export async function mintGrant(env: Env, appId: string, humanId: string): Promise<string> {
  const { grant, insert } = await grantInsert(env, appId, humanId, GRANT_TTL_SECONDS);
  await env.DB.batch([
    // Spent and expired grants are useless; dropping them here keeps the table small.
    env.DB.prepare("DELETE FROM app_session_grants WHERE expires_at < ?1").bind(new Date(Date.now() - 3600_000).toISOString()),
    insert,
  ]);
  return grant;
}

/** A grant that lives `ttlSeconds` instead of two minutes (test-session tokens); stored alone, nothing swept. */
export async function mintLongerGrant(env: Env, appId: string, humanId: string, ttlSeconds: number): Promise<{ grant: string; expiresAt: string }> {
  const { grant, expiresAt, insert } = await grantInsert(env, appId, humanId, ttlSeconds);
  await insert.run();
  return { grant, expiresAt };
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
