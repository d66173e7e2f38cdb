/**
 * An app's owner-set settings (WIRE §2.2): its visibility, its timezone and the share link
 * of a link app. One home for the rules, so `PATCH /v1/apps/:id`, the share-link rotate
 * route and the owner console change an app the same way: a visibility the live manifest
 * cannot stand is refused with the compiler's own error; entering `link` mints a share
 * URL (shown once, only its hash kept), leaving it clears the token; rotating makes every
 * old share URL stop working at once; and whenever who may watch changes, every feed
 * socket of the app is closed so it reconnects and is judged again.
 */
import { revokeUnrestricted } from "./unrestricted";
import { config } from "../config";
import { RelayError } from "../errors";
import { getVersion, updateApp, type AppRow, type Visibility } from "../db/apps";
import { manifestLimitsFrom, parseManifest } from "../manifest";
import { endAllSockets } from "./sockets";
import { mintShareToken } from "./share";
import { appUrl } from "./urls";

export const VISIBILITIES = ["private", "link", "public"] as const satisfies readonly Visibility[];

/** An IANA zone name (`Europe/Paris`, `UTC`); offsets such as `+01:00` are not names. */
function validTimezone(zone: string): boolean {
  if (!/^[A-Za-z]/.test(zone)) return false;
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * Some manifest rules depend on the visibility (push notifications need a public app).
 * A visibility change the live manifest cannot stand is refused with the compiler's error,
 * so the live version never becomes one that no longer compiles for its app.
 */
async function checkManifestUnder(env: Env, app: AppRow, visibility: Visibility): Promise<void> {
  const version = app.currentVersion === null ? undefined : await getVersion(env, app.id, app.currentVersion);
  if (!version) return;
  const cfg = config(env);
  const source = JSON.parse(version.manifestJson) as unknown;
  const context = { timezone: app.timezone, appOrigin: appUrl(cfg, app.slug).replace(/\/$/, "") };
  try {
    parseManifest(source, manifestLimitsFrom(cfg), { ...context, visibility: app.visibility });
  } catch {
    return; // Already out of step with today's limits: the visibility is not what breaks it.
  }
  parseManifest(source, manifestLimitsFrom(cfg), { ...context, visibility });
}

function shareUrlOf(env: Env, app: AppRow, token: string): string {
  return `${appUrl(config(env), app.slug)}#k=${token}`;
}

export interface SettingsChange {
  visibility?: Visibility;
  /** A zone name, or null to clear it. */
  timezone?: string | null;
}

/**
 * Applies a settings change to a live app. Answers the app as it now is and, when it just
 * became a link app, its share URL (the only time the URL is ever shown).
 */
export async function changeAppSettings(env: Env, app: AppRow, change: SettingsChange): Promise<{ app: AppRow; shareUrl?: string; unrestrictedRevoked: boolean }> {
  if (typeof change.timezone === "string" && !validTimezone(change.timezone)) {
    throw new RelayError("invalid_request", `"${change.timezone}" is not an IANA time zone such as Europe/Paris.`, { field: "timezone" });
  }
  const newVisibility = change.visibility !== undefined && change.visibility !== app.visibility ? change.visibility : undefined;
  if (newVisibility !== undefined) await checkManifestUnder(env, app, newVisibility);
  const patch: Partial<AppRow> = {};
  let shareUrl: string | undefined;
  if (change.timezone !== undefined) patch.timezone = change.timezone;
  if (newVisibility !== undefined) {
    patch.visibility = newVisibility;
    if (newVisibility === "link") {
      const share = await mintShareToken();
      patch.shareTokenHash = share.hash;
      shareUrl = shareUrlOf(env, app, share.token);
    } else if (app.visibility === "link") {
      patch.shareTokenHash = null;
    }
  }
  const updated = Object.keys(patch).length ? await updateApp(env, app.id, patch) : app;
  // Who may watch changed: every socket reconnects and is judged again.
  if (newVisibility !== undefined) await endAllSockets(env, app.id, "visibility changed");
  // Only a private app may stay unrestricted.
  const unrestrictedRevoked = newVisibility !== undefined && newVisibility !== "private" ? await revokeUnrestricted(env, app.id) : false;
  return { app: updated, ...(shareUrl ? { shareUrl } : {}), unrestrictedRevoked };
}

/** A new share URL for a live link app (shown once); the old one stops working at once. */
export async function rotateShareLink(env: Env, app: AppRow): Promise<string> {
  if (app.visibility !== "link") {
    throw new RelayError("conflict", `Only link apps have a share URL; this app is ${app.visibility}.`, { visibility: app.visibility });
  }
  const share = await mintShareToken();
  await updateApp(env, app.id, { shareTokenHash: share.hash });
  // Sockets opened with the old share pass must not outlive it.
  await endAllSockets(env, app.id, "share link rotated");
  return shareUrlOf(env, app, share.token);
}
