/**
 * The relay's own sign-in session (the `relay_session` cookie the console sets): resolved
 * to the human it belongs to, in the same D1 read as the app a `/v1/apps/:id/…` path names.
 * Only the token's sha256 is stored and a logged-out session is revoked (src/db/humans.ts).
 * The CSRF origin check that every cookie-borne mutation needs stays with the middleware
 * that reads the cookie (src/http/middleware/csrf.ts).
 */
import { findSession } from "../db/humans";
import type { AppRow } from "../db/apps";
import type { HumanCaller } from "./callers";

export const SESSION_COOKIE = "relay_session";

/** The human a session token names (and the app `appRef` names, when asked), or null for no token or one that does not hold. */
export async function humanOfSession(env: { DB: D1Database }, token: string | undefined, appRef?: string): Promise<{ human: HumanCaller; app?: AppRow | null } | null> {
  if (!token) return null;
  const found = await findSession(env, token, appRef);
  if (!found) return null;
  return { human: { kind: "human", humanId: found.human.id, sessionId: found.sessionId, email: found.human.email }, app: found.app };
}
