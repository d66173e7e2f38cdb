/**
 * The pending identity-provider sign-ins (src/db/idp-schema.ts): one row per browser sent
 * to the provider, found by the sha256 of its `state`. Taking an attempt deletes it in the
 * same statement, so two callbacks with one state cannot both sign in; attempts nobody
 * came back for are cleared whenever a new one starts.
 */
import { and, eq, gt, lt } from "drizzle-orm";
import { db } from "./client";
import { idpSignInAttempts } from "./idp-schema";
import { isoIn, nowIso, sha256Hex } from "../auth/tokens";

type Env = { DB: D1Database };

/** How long a person has at the provider before the attempt lapses. */
export const IDP_ATTEMPT_TTL_SECONDS = 10 * 60;

export interface IdpAttempt {
  state: string;
  nonce: string;
  codeVerifier: string;
  returnTo: string | null;
}

export async function saveIdpAttempt(env: Env, attempt: IdpAttempt): Promise<void> {
  const now = nowIso();
  await db(env).delete(idpSignInAttempts).where(lt(idpSignInAttempts.expiresAt, now));
  await db(env).insert(idpSignInAttempts).values({
    stateHash: await sha256Hex(attempt.state), nonce: attempt.nonce, codeVerifier: attempt.codeVerifier,
    returnTo: attempt.returnTo, createdAt: now, expiresAt: isoIn(IDP_ATTEMPT_TTL_SECONDS),
  });
}

/** Spends the unexpired attempt `state` names; null when it is unknown, spent or lapsed. */
export async function takeIdpAttempt(env: Env, state: string): Promise<IdpAttempt | null> {
  const [taken] = await db(env).delete(idpSignInAttempts)
    .where(and(eq(idpSignInAttempts.stateHash, await sha256Hex(state)), gt(idpSignInAttempts.expiresAt, nowIso())))
    .returning();
  return taken ? { state, nonce: taken.nonce, codeVerifier: taken.codeVerifier, returnTo: taken.returnTo } : null;
}
