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

/**
 * The name the session cookie goes by on this API origin. Over https it carries the
 * `__Host-` prefix, so browsers keep it host-only, Secure and path-wide: an app page on a
 * sibling host under the same registrable domain (`<slug>.apps.example.com` beside
 * `relay.example.com`) can neither plant one with `Domain=example.com` nor shadow it with a
 * longer path ("cookie tossing"), and a bare `relay_session` it planted is never read.
 * Plain http (development on localhost, where browsers refuse such cookies anyway) keeps
 * the bare name.
 */
export function sessionCookieName(apiOrigin: string): string {
  return hostBoundCookieName(SESSION_COOKIE, apiOrigin);
}

/** `name` with the `__Host-` prefix over https (see sessionCookieName); such a cookie must be set Secure with Path=/ and no Domain. */
export function hostBoundCookieName(name: string, apiOrigin: string): string {
  return apiOrigin.startsWith("https://") ? `__Host-${name}` : name;
}

/** The human a session token names (and the app `appRef` names, when asked), or null for no token or one that does not hold. */
export async function humanOfSession(env: { DB: D1Database }, token: string | undefined, appRef?: string): Promise<{ human: HumanCaller; app?: AppRow | null } | null> {
  if (!token) return null;
  const found = await findSession(env, token, appRef);
  if (!found) return null;
  return { human: { kind: "human", humanId: found.human.id, sessionId: found.sessionId, email: found.human.email }, app: found.app };
}
