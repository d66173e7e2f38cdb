/**
 * Who may open an app as a signed-in person, decided in one place: the owner, or a
 * member (with the custom roles the owner gave them). Every caller — /authorize, the
 * app-session check on each request, /_svc/session — follows this one function. Access is
 * re-checked on every request that presents an app session, so losing access (a
 * transfer, a removed member) takes effect at once; and a session issued before the
 * person's current membership began is refused, so removing someone and adding them
 * back does not revive the sessions they had before.
 */
import type { AppRow } from "../../db/apps";
import { membershipOf } from "../../db/members";

/** The kind of signed-in viewer a person is on an app; a member carries their custom roles. */
export type AppAccess = { kind: "owner" } | { kind: "member"; roles: string[] };
export type AppAccessKind = AppAccess["kind"];

export interface AccessOptions {
  /** The presented app session's issue time (seconds since the epoch). */
  sessionIssuedAt?: number;
}

export async function appAccessFor(env: { DB: D1Database }, app: AppRow, humanId: string, options: AccessOptions = {}): Promise<AppAccess | null> {
  if (app.status === "deleted" || app.status === "suspended") return null;
  if (app.ownerHumanId === humanId) return { kind: "owner" };
  const membership = await membershipOf(env, app.id, humanId);
  if (!membership) return null;
  if (options.sessionIssuedAt !== undefined && options.sessionIssuedAt < Math.floor(Date.parse(membership.createdAt) / 1000)) return null;
  return { kind: "member", roles: membership.customRoles };
}
