/**
 * Who may open an app as a signed-in person, decided in one place. Today only the owner
 * has access; the members issue extends this function (a D1 lookup of the app's members)
 * and every caller — /authorize, the app-session check on each request, /_svc/session —
 * follows without change. Access is re-checked on every request that presents an app
 * session, so losing access (a transfer, a removed member) takes effect at once.
 */
import type { AppRow } from "../../db/apps";

/** The kind of signed-in viewer a person is on an app ("member" arrives with members). */
export type AppAccess = "owner";

export async function appAccessFor(_env: { DB: D1Database }, app: AppRow, humanId: string): Promise<AppAccess | null> {
  if (app.status === "deleted" || app.status === "suspended") return null;
  return app.ownerHumanId === humanId ? "owner" : null;
}
