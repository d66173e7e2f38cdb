/**
 * Grant links and their holders in D1. A link's token and each holder's token are stored
 * as sha256 only. Claiming a use and minting the holder happen in one D1 batch whose two
 * statements test the same condition (live, unexpired, uses left), so two browsers racing
 * for the last use of a link cannot both win and a failed claim leaves no holder behind.
 */
import { and, desc, eq, isNull, sql } from "drizzle-orm";
import { db } from "./client";
import { grantHolders, grantLinks } from "./access-schema";
import { constantTimeEqual, nowIso, sha256Hex } from "../auth/tokens";

type Env = { DB: D1Database };
export type GrantLinkRow = typeof grantLinks.$inferSelect;
export type GrantHolderRow = typeof grantHolders.$inferSelect;

export async function insertGrantLink(env: Env, row: GrantLinkRow): Promise<void> {
  await db(env).insert(grantLinks).values(row);
}

/** Every link of the app, revoked and expired ones included, newest first. */
export async function listGrantLinks(env: Env, appId: string): Promise<GrantLinkRow[]> {
  return db(env).select().from(grantLinks).where(eq(grantLinks.appId, appId)).orderBy(desc(grantLinks.createdAt), desc(grantLinks.id));
}

export async function getGrantLink(env: Env, appId: string, id: string): Promise<GrantLinkRow | undefined> {
  return (await db(env).select().from(grantLinks).where(and(eq(grantLinks.appId, appId), eq(grantLinks.id, id))).limit(1))[0];
}

/** Revokes the link (idempotent: a second call keeps the first time). */
export async function revokeGrantLink(env: Env, appId: string, id: string): Promise<void> {
  await db(env).update(grantLinks).set({ revokedAt: nowIso() })
    .where(and(eq(grantLinks.appId, appId), eq(grantLinks.id, id), isNull(grantLinks.revokedAt)));
}

/** Live (unrevoked, unexpired) links of the app per role, for the roles summary. */
export async function activeGrantCounts(env: Env, appId: string, now = nowIso()): Promise<Record<string, number>> {
  const rows = await db(env).select({ role: grantLinks.role, n: sql<number>`count(*)` }).from(grantLinks)
    .where(and(eq(grantLinks.appId, appId), isNull(grantLinks.revokedAt), sql`${grantLinks.expiresAt} > ${now}`))
    .groupBy(grantLinks.role);
  return Object.fromEntries(rows.map((r) => [r.role, Number(r.n)]));
}

export async function findGrantLinkByToken(env: Env, token: string): Promise<GrantLinkRow | undefined> {
  const hash = await sha256Hex(token);
  const row = (await db(env).select().from(grantLinks).where(eq(grantLinks.tokenHash, hash)).limit(1))[0];
  return row && constantTimeEqual(row.tokenHash, hash) ? row : undefined;
}

/** The link still admits a new holder: not revoked, not expired, uses left. Binds ?1 = link id, ?2 = now. */
const CLAIMABLE = "id = ?1 AND revoked_at IS NULL AND expires_at > ?2 AND (max_uses IS NULL OR use_count < max_uses)";

/**
 * Spends one use of the link and mints its holder, atomically. False when the link was
 * revoked, expired or spent by the time the batch ran (nothing is written then).
 */
export async function claimGrantLink(env: Env, link: GrantLinkRow, holder: GrantHolderRow): Promise<boolean> {
  const now = holder.createdAt;
  const [inserted] = await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO grant_holders (id, grant_id, app_id, token_hash, created_at) SELECT ?3, ?1, ?4, ?5, ?2 WHERE EXISTS (SELECT 1 FROM grant_links WHERE ${CLAIMABLE})`,
    ).bind(link.id, now, holder.id, holder.appId, holder.tokenHash),
    env.DB.prepare(`UPDATE grant_links SET use_count = use_count + 1, claim_count = claim_count + 1 WHERE ${CLAIMABLE}`).bind(link.id, now),
  ]);
  return inserted.meta.changes === 1;
}

/** Counts a remembered holder's repeat exchange (no use is spent). */
export async function countRepeatClaim(env: Env, linkId: string): Promise<void> {
  await env.DB.prepare("UPDATE grant_links SET claim_count = claim_count + 1 WHERE id = ?1").bind(linkId).run();
}

/** The holder a presented token names, with its link; undefined for an unknown token. */
export async function findGrantHolder(env: Env, token: string): Promise<{ holder: GrantHolderRow; link: GrantLinkRow } | undefined> {
  const hash = await sha256Hex(token);
  const rows = await db(env).select({ holder: grantHolders, link: grantLinks }).from(grantHolders)
    .innerJoin(grantLinks, eq(grantLinks.id, grantHolders.grantId))
    .where(eq(grantHolders.tokenHash, hash)).limit(1);
  const hit = rows[0];
  return hit && constantTimeEqual(hit.holder.tokenHash, hash) ? hit : undefined;
}

/** Everything delegated on an app goes with it when the app is purged. */
export async function deleteAppAccess(env: Env, appId: string): Promise<void> {
  await env.DB.batch([
    env.DB.prepare("DELETE FROM grant_holders WHERE app_id = ?1").bind(appId),
    env.DB.prepare("DELETE FROM grant_links WHERE app_id = ?1").bind(appId),
    env.DB.prepare("DELETE FROM service_credentials WHERE app_id = ?1").bind(appId),
  ]);
}
