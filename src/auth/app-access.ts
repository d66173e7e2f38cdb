/**
 * Who may open an app as a signed-in person, decided in one place: the owner, or a
 * member (with the custom roles the owner gave them). Every caller — /authorize, the
 * app-session check on each request, /_svc/session — follows this one function. Access is
 * re-checked on every request that presents an app session, so losing access (a
 * transfer, a removed member) takes effect at once; and a session not issued after the
 * person's current membership began is refused, so removing someone and adding them
 * back — even within the same second — does not revive the sessions they had before.
 */
import type { AppRow } from "../db/apps";
import { membershipOf } from "../db/members";

/** The kind of signed-in viewer a person is on an app; a member carries their custom roles. */
export type AppAccess = { kind: "owner" } | { kind: "member"; roles: string[] };
export type AppAccessKind = AppAccess["kind"];

export interface AccessOptions {
  /** The presented app session's issue time (milliseconds since the epoch). */
  sessionIssuedAtMs?: number;
}

/**
 * Whether a session issued at `issuedAtMs` predates a membership created at `createdAt`
 * (an ISO time with milliseconds, as members are stored). Both are millisecond times, so a
 * removal and re-add within one second is still told apart. A tie is refused: a session
 * issued in the very millisecond the membership began cannot be shown to come after it,
 * and a real sign-in always follows the membership by at least one more request (the
 * sign-in grant is minted, then traded), so refusing a tie costs nobody a valid session.
 */
export function issuedBeforeMembership(issuedAtMs: number, createdAt: string): boolean {
  return issuedAtMs <= Date.parse(createdAt);
}

export async function appAccessFor(env: { DB: D1Database }, app: AppRow, humanId: string, options: AccessOptions = {}): Promise<AppAccess | null> {
  if (app.status === "deleted" || app.status === "suspended") return null;
  if (app.ownerHumanId === humanId) return { kind: "owner" };
  const membership = await membershipOf(env, app.id, humanId);
  if (!membership) return null;
  if (options.sessionIssuedAtMs !== undefined && issuedBeforeMembership(options.sessionIssuedAtMs, membership.createdAt)) return null;
  return { kind: "member", roles: membership.customRoles };
}
