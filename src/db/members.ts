/**
 * App members and invitations in D1. A member row says a human may open the app with the
 * custom roles listed; the owner is never stored here (the app row names them). An
 * invitation is for one email address on one app: its token is a secret (sha256 only),
 * works once, for seven days, and only for a session of that address. Accepting spends
 * the token and creates the member row in one D1 batch, so two racing accepts cannot
 * both win and a failed insert leaves the token unspent.
 */
import { and, asc, eq, gt, isNull, ne, sql } from "drizzle-orm";
import { db } from "./client";
import { humans } from "./schema";
import { apps } from "./apps-schema";
import { appInvites, appMembers } from "./members-schema";
import { appSessionGrants } from "./serve-schema";
import { isoIn, nowIso, randomHex, sha256Hex } from "../auth/tokens";
import type { AppRow } from "./apps";

type Env = { DB: D1Database };

export type MemberRow = typeof appMembers.$inferSelect;
export type InviteRow = typeof appInvites.$inferSelect;

export const INVITE_TTL_SECONDS = 7 * 24 * 3600;
export const INVITE_PREFIX = "inv_";
const INVITE_PATTERN = /^inv_[0-9a-f]{32}$/;

export interface MemberWithEmail {
  humanId: string;
  email: string;
  customRoles: string[];
  createdAt: string;
}

export function parseRoles(json: string): string[] {
  try {
    const list = JSON.parse(json) as unknown;
    return Array.isArray(list) ? list.filter((r): r is string => typeof r === "string") : [];
  } catch {
    return [];
  }
}

function withEmail(row: { member: MemberRow; email: string }): MemberWithEmail {
  return { humanId: row.member.humanId, email: row.email, customRoles: parseRoles(row.member.customRoles), createdAt: row.member.createdAt };
}

/** Members of the app (never the owner), oldest first. */
export async function listMembers(env: Env, appId: string): Promise<MemberWithEmail[]> {
  const rows = await db(env).select({ member: appMembers, email: humans.email }).from(appMembers)
    .innerJoin(humans, eq(humans.id, appMembers.humanId))
    .where(eq(appMembers.appId, appId))
    .orderBy(asc(appMembers.createdAt), asc(appMembers.humanId));
  return rows.map(withEmail);
}

export async function findMember(env: Env, appId: string, humanId: string): Promise<MemberWithEmail | undefined> {
  const rows = await db(env).select({ member: appMembers, email: humans.email }).from(appMembers)
    .innerJoin(humans, eq(humans.id, appMembers.humanId))
    .where(and(eq(appMembers.appId, appId), eq(appMembers.humanId, humanId))).limit(1);
  return rows[0] ? withEmail(rows[0]) : undefined;
}

/** The membership the access check needs: roles and since when; no join. */
export async function membershipOf(env: Env, appId: string, humanId: string): Promise<{ customRoles: string[]; createdAt: string } | undefined> {
  const row = (await db(env).select({ customRoles: appMembers.customRoles, createdAt: appMembers.createdAt }).from(appMembers)
    .where(and(eq(appMembers.appId, appId), eq(appMembers.humanId, humanId))).limit(1))[0];
  return row ? { customRoles: parseRoles(row.customRoles), createdAt: row.createdAt } : undefined;
}

/**
 * Adds the human as a member. An existing member keeps their row; `roles` (when given)
 * replaces their custom roles. `created` says whether the membership is new.
 */
export async function addMember(env: Env, appId: string, humanId: string, roles: string[] | undefined): Promise<{ created: boolean }> {
  const now = nowIso();
  const inserted = await db(env).insert(appMembers)
    .values({ appId, humanId, customRoles: JSON.stringify(roles ?? []), createdAt: now, updatedAt: now })
    .onConflictDoNothing().returning({ humanId: appMembers.humanId });
  if (inserted.length === 0 && roles !== undefined) await setMemberRoles(env, appId, humanId, roles);
  return { created: inserted.length === 1 };
}

/** Replaces the member's custom roles; false when the human is not a member. */
export async function setMemberRoles(env: Env, appId: string, humanId: string, roles: string[]): Promise<boolean> {
  const rows = await db(env).update(appMembers).set({ customRoles: JSON.stringify(roles), updatedAt: nowIso() })
    .where(and(eq(appMembers.appId, appId), eq(appMembers.humanId, humanId))).returning({ humanId: appMembers.humanId });
  return rows.length === 1;
}

/**
 * Ends the membership (a no-op for a non-member) and drops any sign-in grant the human
 * has not yet traded on this app. App sessions need no list: access is re-checked on
 * every request, and a token older than a later membership is refused anyway.
 */
export async function removeMember(env: Env, appId: string, humanId: string): Promise<void> {
  const d = db(env);
  await d.batch([
    d.delete(appMembers).where(and(eq(appMembers.appId, appId), eq(appMembers.humanId, humanId))),
    d.delete(appSessionGrants).where(and(eq(appSessionGrants.appId, appId), eq(appSessionGrants.humanId, humanId))),
  ]);
}

/** How many members hold each custom role directly. */
export async function roleCounts(env: Env, appId: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const rows = await db(env).select({ customRoles: appMembers.customRoles }).from(appMembers).where(eq(appMembers.appId, appId));
  for (const row of rows) for (const role of new Set(parseRoles(row.customRoles))) counts.set(role, (counts.get(role) ?? 0) + 1);
  return counts;
}

/** Apps (not deleted) the human has joined as a member, newest activity first, with the roles held. */
export async function appsJoinedBy(env: Env, humanId: string): Promise<Array<{ app: AppRow; customRoles: string[]; joinedAt: string }>> {
  const rows = await db(env).select({ app: apps, customRoles: appMembers.customRoles, joinedAt: appMembers.createdAt }).from(appMembers)
    .innerJoin(apps, eq(apps.id, appMembers.appId))
    .where(and(eq(appMembers.humanId, humanId), ne(apps.status, "deleted"), ne(apps.ownerHumanId, humanId)))
    .orderBy(sql`${apps.lastActivityAt} DESC`, asc(apps.id));
  return rows.map((r) => ({ app: r.app, customRoles: parseRoles(r.customRoles), joinedAt: r.joinedAt }));
}

// ---- invitations ----

export interface InviteInput {
  appId: string;
  email: string;
  roles: string[];
  invitedByHumanId: string;
  invitedByAgentId: string | null;
}

/**
 * Creates the invitation, or refreshes the one already there for this address (new
 * token, new expiry, new roles, unspent again). Returns the token, shown only in the mail.
 */
export async function upsertInvite(env: Env, input: InviteInput): Promise<{ token: string; expiresAt: string }> {
  const token = INVITE_PREFIX + randomHex(16);
  const now = nowIso();
  const expiresAt = isoIn(INVITE_TTL_SECONDS);
  const values = {
    tokenHash: await sha256Hex(token), customRoles: JSON.stringify(input.roles), invitedByHumanId: input.invitedByHumanId,
    invitedByAgentId: input.invitedByAgentId, createdAt: now, expiresAt, usedAt: null, acceptedHumanId: null,
  };
  await db(env).insert(appInvites).values({ appId: input.appId, email: input.email, ...values })
    .onConflictDoUpdate({ target: [appInvites.appId, appInvites.email], set: values });
  return { token, expiresAt };
}

/** Unspent, unexpired invitations of the app, newest first. */
export async function pendingInvites(env: Env, appId: string): Promise<InviteRow[]> {
  return db(env).select().from(appInvites)
    .where(and(eq(appInvites.appId, appId), isNull(appInvites.usedAt), gt(appInvites.expiresAt, nowIso())))
    .orderBy(sql`${appInvites.createdAt} DESC`);
}

/** Withdraws an unspent invitation (idempotent). */
export async function cancelInvite(env: Env, appId: string, email: string): Promise<void> {
  await db(env).delete(appInvites).where(and(eq(appInvites.appId, appId), eq(appInvites.email, email), isNull(appInvites.usedAt)));
}

/** The invitation a token names, whatever its state; undefined for a malformed or unknown token. */
export async function findInvite(env: Env, token: string): Promise<InviteRow | undefined> {
  if (!INVITE_PATTERN.test(token)) return undefined;
  return (await db(env).select().from(appInvites).where(eq(appInvites.tokenHash, await sha256Hex(token))).limit(1))[0];
}

export function inviteUsable(invite: InviteRow, now = nowIso()): boolean {
  return invite.usedAt === null && invite.expiresAt > now;
}

/**
 * Spends the invitation for `humanId` (whose verified address must be the invited one)
 * and creates the membership with the invitation's roles, in one batch. An existing
 * membership is kept as it is. False when the token was spent, expired, refreshed or
 * is for another address by the time this runs.
 */
export async function acceptInvite(env: Env, token: string, humanId: string, email: string): Promise<boolean> {
  const now = nowIso();
  const hash = await sha256Hex(token);
  const [spent] = await env.DB.batch([
    env.DB.prepare(
      "UPDATE app_invites SET used_at = ?1, accepted_human_id = ?2 WHERE token_hash = ?3 AND email = ?4 AND used_at IS NULL AND expires_at > ?1",
    ).bind(now, humanId, hash, email),
    env.DB.prepare(
      "INSERT INTO app_members (app_id, human_id, custom_roles, created_at, updated_at) " +
      "SELECT app_id, ?2, custom_roles, ?1, ?1 FROM app_invites WHERE token_hash = ?3 AND used_at = ?1 AND accepted_human_id = ?2 " +
      "ON CONFLICT (app_id, human_id) DO NOTHING",
    ).bind(now, humanId, hash),
  ]);
  return spent.meta.changes === 1;
}

/** Memberships and invitations go with the app when it is purged. */
export async function deleteAppMembers(env: Env, appId: string): Promise<void> {
  await env.DB.batch([
    env.DB.prepare("DELETE FROM app_members WHERE app_id = ?1").bind(appId),
    env.DB.prepare("DELETE FROM app_invites WHERE app_id = ?1").bind(appId),
  ]);
}
