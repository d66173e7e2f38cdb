/**
 * Service credentials in D1. A credential belongs to one app; its token is stored as
 * sha256 only, and a rotation keeps the replaced token's hash beside the new one until
 * the overlap window ends. Every state change is one conditional UPDATE, so a revoke
 * racing a resume or a rotate can never bring a revoked credential back. The revoke is
 * also offered as a prepared statement, which an accepted ownership transfer puts in its
 * D1 batch to revoke every credential of the app.
 */
import { and, desc, eq, isNull, or, type SQL } from "drizzle-orm";
import { db } from "./client";
import { apps } from "./apps-schema";
import type { AppRow } from "./apps";
import { serviceCredentials } from "./access-schema";
import { constantTimeEqual, nowIso, sha256Hex } from "../auth/tokens";

type Env = { DB: D1Database };
export type CredentialRow = typeof serviceCredentials.$inferSelect;

export async function insertCredential(env: Env, row: CredentialRow): Promise<void> {
  await db(env).insert(serviceCredentials).values(row);
}

/** Every credential of the app, revoked ones included, newest first. */
export async function listCredentials(env: Env, appId: string): Promise<CredentialRow[]> {
  return db(env).select().from(serviceCredentials).where(eq(serviceCredentials.appId, appId))
    .orderBy(desc(serviceCredentials.createdAt), desc(serviceCredentials.id));
}

export async function getCredential(env: Env, appId: string, id: string): Promise<CredentialRow | undefined> {
  return (await db(env).select().from(serviceCredentials)
    .where(and(eq(serviceCredentials.appId, appId), eq(serviceCredentials.id, id))).limit(1))[0];
}

/** Pauses or resumes a credential that is not revoked; undefined when it is revoked (or gone). */
export async function setCredentialPaused(env: Env, appId: string, id: string, paused: boolean): Promise<CredentialRow | undefined> {
  const rows = await db(env).update(serviceCredentials).set({ pausedAt: paused ? nowIso() : null })
    .where(and(eq(serviceCredentials.appId, appId), eq(serviceCredentials.id, id), isNull(serviceCredentials.revokedAt)))
    .returning();
  return rows[0];
}

export interface RevokeScope {
  /** One credential; omitted: every credential of the app that is not revoked yet. */
  id?: string;
  /** The revocation time (default now). */
  at?: string;
  /** A further condition, so a D1 batch can make the revoke depend on its guard statement. */
  onlyIf?: SQL;
}

/**
 * The revoke as one prepared statement, for `DB.batch`: revoked for good, and an
 * overlap-window token forgotten; a credential already revoked keeps its first
 * `revoked_at`. Revoking one credential and revoking all of an app's (an ownership
 * transfer) are this same statement.
 */
export function revokeCredentialsStatement(env: Env, appId: string, scope: RevokeScope = {}): D1PreparedStatement {
  const query = db(env).update(serviceCredentials)
    .set({ revokedAt: scope.at ?? nowIso(), previousTokenHash: null, previousExpiresAt: null })
    .where(and(
      eq(serviceCredentials.appId, appId),
      scope.id === undefined ? undefined : eq(serviceCredentials.id, scope.id),
      isNull(serviceCredentials.revokedAt),
      scope.onlyIf,
    ));
  const { sql: text, params } = query.toSQL();
  return env.DB.prepare(text).bind(...params);
}

/** Revokes for good and forgets an overlap-window token; a second revoke changes nothing. */
export async function revokeCredential(env: Env, appId: string, id: string): Promise<void> {
  await revokeCredentialsStatement(env, appId, { id }).run();
}

/**
 * Moves the current token into the overlap slot (or drops it when `previousExpiresAt` is
 * null) and installs the new one. A token that was already in the overlap slot is
 * replaced, so it stops at once. Undefined when the credential was revoked meanwhile.
 */
export async function rotateCredential(
  env: Env, current: CredentialRow, next: { tokenHash: string; tokenPrefix: string }, previousExpiresAt: string | null,
): Promise<CredentialRow | undefined> {
  const keep = previousExpiresAt !== null;
  const rows = await db(env).update(serviceCredentials).set({
    tokenHash: next.tokenHash,
    tokenPrefix: next.tokenPrefix,
    previousTokenHash: keep ? current.tokenHash : null,
    previousTokenPrefix: keep ? current.tokenPrefix : null,
    previousExpiresAt,
    rotatedAt: nowIso(),
  }).where(and(
    eq(serviceCredentials.id, current.id), eq(serviceCredentials.tokenHash, current.tokenHash), isNull(serviceCredentials.revokedAt),
  )).returning();
  return rows[0];
}

export async function touchCredential(env: Env, id: string): Promise<void> {
  await db(env).update(serviceCredentials).set({ lastUsedAt: nowIso() }).where(eq(serviceCredentials.id, id));
}

export type CredentialLookup =
  | { ok: true; credential: CredentialRow; ownerHumanId: string; app: AppRow }
  | { ok: false; reason: "unknown" | "revoked" | "expired" | "paused" };

/**
 * The credential a presented token names, with its app's owner (whose authority it
 * acts under). The current token, or the previous one inside its overlap window.
 */
export async function findCredentialByToken(env: Env, token: string, now = Date.now()): Promise<CredentialLookup> {
  const hash = await sha256Hex(token);
  const rows = await db(env).select({ credential: serviceCredentials, app: apps })
    .from(serviceCredentials).innerJoin(apps, eq(apps.id, serviceCredentials.appId))
    .where(or(eq(serviceCredentials.tokenHash, hash), eq(serviceCredentials.previousTokenHash, hash))).limit(1);
  const hit = rows[0];
  if (!hit) return { ok: false, reason: "unknown" };
  const c = hit.credential;
  const current = constantTimeEqual(c.tokenHash, hash);
  const previous = !current && c.previousTokenHash !== null && constantTimeEqual(c.previousTokenHash, hash);
  if (!current && !previous) return { ok: false, reason: "unknown" };
  if (c.revokedAt) return { ok: false, reason: "revoked" };
  if (c.expiresAt !== null && Date.parse(c.expiresAt) <= now) return { ok: false, reason: "expired" };
  if (previous && (c.previousExpiresAt === null || Date.parse(c.previousExpiresAt) <= now)) return { ok: false, reason: "expired" };
  if (c.pausedAt) return { ok: false, reason: "paused" };
  return { ok: true, credential: c, ownerHumanId: hit.app.ownerHumanId, app: hit.app };
}
