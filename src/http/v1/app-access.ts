/**
 * Finding the app a request names, with the caller's authority: an agent reaches the
 * apps of the human who claimed it, a human their own. Anything else — another owner's
 * app, a typo, an unclaimed agent — is the same `app_not_found`, so ids and slugs of
 * other people's apps cannot be probed.
 */
import { RelayError } from "../../errors";
import { findAppForOwner, type AppRow } from "../../db/apps";
import type { AppContext } from "../types";

export function ownerOf(c: AppContext): string | null {
  const actor = c.get("actor");
  if (actor) return actor.ownerHumanId;
  return c.get("agent")?.ownerHumanId ?? null;
}

export async function ownedApp(c: AppContext, idOrSlug: string): Promise<AppRow> {
  const owner = ownerOf(c);
  // The auth lookup may already have found it (one D1 read per request); it is used once,
  // so a handler that looks again after changing the app reads it fresh.
  const known = c.get("appLookup");
  if (known) c.set("appLookup", null);
  let app = !owner ? undefined
    : known?.ref === idOrSlug ? known.app ?? undefined
    : await findAppForOwner(c.env, owner, idOrSlug);
  // A service or lease credential carries its owner's authority over its own app only.
  const delegate = c.get("credential") ?? c.get("lease");
  if (delegate && app?.id !== delegate.appId) app = undefined;
  if (!app) throw new RelayError("app_not_found", `No app "${idOrSlug.slice(0, 100)}" is visible to you.`, { app: idOrSlug.slice(0, 100) });
  return app;
}

/** Refuses apps in the trash: restore first (or read with ?include_deleted=true). */
export function requireLive(app: AppRow): AppRow {
  if (app.status === "deleted") {
    throw new RelayError("soft_deleted", "This app is in the trash; restore it first.", { app_id: app.id, deleted_at: app.deletedAt });
  }
  return app;
}
