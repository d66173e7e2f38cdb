/**
 * Unrestricted apps (spec A `POST /v1/apps/:id/unrestricted`, HSO): the owner, in their
 * own session, lets a PRIVATE app with no live grant links reach any internet host from
 * its page (the served CSP's connect-src opens to every https and wss origin). The
 * conditions are checked when it is turned on and kept afterwards: whatever would let
 * someone other than the owner and members run the page — minting a grant link or a
 * service credential, leaving private — turns it off again, and that response says so
 * (`unrestricted_revoked: true`, WIRE §2.6 for credentials).
 */
import { eq } from "drizzle-orm";
import { db } from "../db/client";
import { appUnrestricted } from "../db/operate-schema";
import { activeGrantCounts } from "../db/grant-links";
import type { AppRow } from "../db/apps";
import { RelayError } from "../errors";

type Env = { DB: D1Database };

export interface UnrestrictedView {
  app_id: string;
  unrestricted: boolean;
  enabled_at: string | null;
}

export async function unrestrictedState(env: Env, appId: string): Promise<UnrestrictedView> {
  const row = (await db(env).select().from(appUnrestricted).where(eq(appUnrestricted.appId, appId)).limit(1))[0];
  return { app_id: appId, unrestricted: !!row, enabled_at: row?.enabledAt ?? null };
}

/** Turns it on (private app, no live grant links) or off (idempotent). */
export async function setUnrestricted(env: Env, app: AppRow, enabled: boolean, humanId: string): Promise<UnrestrictedView> {
  if (!enabled) {
    await db(env).delete(appUnrestricted).where(eq(appUnrestricted.appId, app.id));
    return { app_id: app.id, unrestricted: false, enabled_at: null };
  }
  if (app.visibility !== "private") {
    throw new RelayError("conflict", `Only a private app may be unrestricted; this app is ${app.visibility}.`, { visibility: app.visibility });
  }
  const liveGrants = Object.values(await activeGrantCounts(env, app.id)).reduce((sum, n) => sum + n, 0);
  if (liveGrants > 0) {
    throw new RelayError("conflict", `The app has ${liveGrants} live grant link(s); revoke them before making it unrestricted.`, { live_grant_links: liveGrants });
  }
  const enabledAt = new Date().toISOString();
  await db(env).insert(appUnrestricted).values({ appId: app.id, enabledAt, enabledByHumanId: humanId }).onConflictDoNothing();
  return unrestrictedState(env, app.id);
}

/** Turns it off because something now lets others run the page; answers whether it was on. */
export async function revokeUnrestricted(env: Env, appId: string): Promise<boolean> {
  const removed = await db(env).delete(appUnrestricted).where(eq(appUnrestricted.appId, appId)).returning({ appId: appUnrestricted.appId });
  return removed.length > 0;
}

/** What a response that turned it off carries (WIRE §2.6's optional fields). */
export function revocationNotice(revoked: boolean): { unrestricted_revoked?: true; unrestricted_notice?: string } {
  return revoked ? { unrestricted_revoked: true, unrestricted_notice: "The app was unrestricted; it no longer is, so its page may reach only its declared externalHosts again." } : {};
}
