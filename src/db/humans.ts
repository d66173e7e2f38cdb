/**
 * Humans, their sign-in links and their sessions. A magic link and a session token are
 * secrets: only sha256 is stored, links work once within 15 minutes, and logging out
 * revokes the session row so a copied cookie stops working.
 */
import { and, eq, gt, isNull, sql } from "drizzle-orm";
import { db, preparedPerBinding } from "./client";
import { humans, magicLinks, sessions } from "./schema";
import { apps } from "./apps-schema";
import { ownedAppCondition, type AppRow } from "./apps";
import { isoIn, mintSecret, newId, nowIso, sha256Hex } from "../auth/tokens";

export type HumanRow = typeof humans.$inferSelect;
type Env = { DB: D1Database };

export const MAGIC_LINK_TTL_SECONDS = 15 * 60;
export const SESSION_TTL_SECONDS = 30 * 24 * 3600;

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export async function createMagicLink(env: Env, email: string, returnTo: string | null): Promise<string> {
  const token = mintSecret("magicLink");
  await db(env).insert(magicLinks).values({
    tokenHash: await sha256Hex(token), email: normaliseEmail(email), returnTo, createdAt: nowIso(), expiresAt: isoIn(MAGIC_LINK_TTL_SECONDS),
  });
  return token;
}

/** Spends a magic link: the first sign-in creates the human. Null when unknown, used or expired. */
export async function consumeMagicLink(env: Env, token: string): Promise<{ human: HumanRow; returnTo: string | null } | null> {
  const d = db(env);
  const now = nowIso();
  const spent = await d.update(magicLinks).set({ usedAt: now })
    .where(and(eq(magicLinks.tokenHash, await sha256Hex(token)), isNull(magicLinks.usedAt), gt(magicLinks.expiresAt, now)))
    .returning();
  const link = spent[0];
  if (!link) return null;
  return { human: await humanOfVerifiedEmail(env, link.email), returnTo: link.returnTo };
}

/**
 * The human who owns `email`, proven just now (a spent magic link, or an identity
 * provider's verified address): created on first sign-in, and marked verified if it was
 * not yet. Every way of signing in goes through here, so one address is one human.
 */
export async function humanOfVerifiedEmail(env: Env, email: string): Promise<HumanRow> {
  const d = db(env);
  const now = nowIso();
  const address = normaliseEmail(email);
  await d.insert(humans).values({ id: newId("h"), email: address, createdAt: now, emailVerifiedAt: now })
    .onConflictDoNothing({ target: humans.email });
  const human = (await d.select().from(humans).where(eq(humans.email, address)).limit(1))[0];
  if (!human.emailVerifiedAt) await d.update(humans).set({ emailVerifiedAt: now }).where(eq(humans.id, human.id));
  return human;
}

export async function createSession(env: Env, humanId: string): Promise<{ token: string; expiresAt: string }> {
  const token = mintSecret("session");
  const expiresAt = isoIn(SESSION_TTL_SECONDS);
  await db(env).insert(sessions).values({ id: newId("s"), humanId, tokenHash: await sha256Hex(token), createdAt: nowIso(), expiresAt });
  return { token, expiresAt };
}

/** The session lookup's two queries (it runs on every signed-in request), prepared once. */
const sessionLookupsOf = preparedPerBinding((d) => {
  const joined = () => d.select().from(sessions).innerJoin(humans, eq(humans.id, sessions.humanId));
  const live = and(eq(sessions.tokenHash, sql.placeholder("hash")), isNull(sessions.revokedAt), gt(sessions.expiresAt, sql.placeholder("now")));
  return {
    alone: joined().where(live).limit(1).prepare(),
    withApp: joined().leftJoin(apps, ownedAppCondition(humans.id, sql.placeholder("ref"))).where(live).limit(1).prepare(),
  };
});

/** A live session and its human; with `appRef`, also that app among the human's own (see findAgentByKey). */
export async function findSession(env: Env, token: string, appRef?: string): Promise<{ sessionId: string; human: HumanRow; app?: AppRow | null } | null> {
  const lookups = sessionLookupsOf(env);
  const values = { hash: await sha256Hex(token), now: nowIso() };
  const rows = appRef === undefined
    ? (await lookups.alone.all(values)).map((r) => ({ ...r, apps: undefined }))
    : await lookups.withApp.all({ ...values, ref: appRef });
  const hit = rows[0];
  return hit ? { sessionId: hit.sessions.id, human: hit.humans, app: hit.apps } : null;
}

export async function revokeSession(env: Env, sessionId: string): Promise<void> {
  await db(env).update(sessions).set({ revokedAt: nowIso() }).where(eq(sessions.id, sessionId));
}

export async function getHuman(env: Env, humanId: string): Promise<HumanRow | undefined> {
  return (await db(env).select().from(humans).where(eq(humans.id, humanId)).limit(1))[0];
}

export async function setHumanName(env: Env, humanId: string, name: string | null): Promise<HumanRow> {
  const rows = await db(env).update(humans).set({ name }).where(eq(humans.id, humanId)).returning();
  return rows[0];
}

export async function setMarketingConsent(env: Env, humanId: string, consent: boolean): Promise<void> {
  await db(env).update(humans).set({ marketingConsent: consent }).where(eq(humans.id, humanId));
}

/** The name shown for a human: the stored name, else the part of the email before the @. */
export function displayName(human: HumanRow): string {
  return human.name ?? human.email.split("@")[0];
}
