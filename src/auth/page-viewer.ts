/**
 * Who is looking at an app's document and assets, from the credentials a request carries
 * in headers (app origins have no cookies): an app-session token as `Authorization:
 * Bearer`, and on a link app the share token as `x-service-share`, checked against the
 * app's CURRENT hash so a rotated link stops at once (on a private app the same header may
 * carry a live preview token). A grant-link holder credential (`Authorization: Bearer
 * grh_…`, from `POST /_svc/grant`) makes an anonymous viewer that carries the link's role
 * and opens private and link apps: the link is the invitation. A presented credential
 * that does not hold is reported as `rejected`, so callers can answer 401 instead of
 * silently serving less. src/http/serve/viewer.ts reads the headers and decides what the
 * viewer may open.
 */
import type { AppRow } from "../db/apps";
import { shareTokenMatches } from "../apps/share";
import type { AppAccessKind } from "./app-access";
import { appSessionAccess } from "./app-session";
import { grantPrincipalFor, isGrantHolderToken } from "./grant-holder";
import { isPreviewToken, previewTokenValid } from "./preview-token";
import type { SigningKeys } from "./signing-keys";

export interface Viewer {
  kind: AppAccessKind | "anonymous";
  humanId: string | null;
  /** A member's custom roles (empty for everyone else). */
  roles: string[];
  /** A pass that opens the app was presented: a link app's current share token, or a private app's live preview token. */
  share: boolean;
  /** A grant-link holder (still `anonymous`): its holder id and the link's role. */
  grant: { holderId: string; role: string } | null;
  /** A credential was presented and did not hold (expired, other app, rotated, lost access). */
  rejected: boolean;
}

export const ANONYMOUS: Viewer = { kind: "anonymous", humanId: null, roles: [], share: false, grant: null, rejected: false };

/** What a request presented: its bearer (see src/auth/bearer.ts) and its share header, if any. */
export interface ViewerCredentials {
  bearer: string | null | undefined;
  share: string | undefined;
}

/**
 * The viewer these credentials make. `sessionKeys`: the keys an app session is checked
 * with, or the app origin's refusal when the relay has none (asked only when a session is
 * presented).
 */
export async function resolveViewer(env: { DB: D1Database }, app: AppRow, presented: ViewerCredentials, sessionKeys: () => Promise<SigningKeys>): Promise<Viewer> {
  const viewer: Viewer = { ...ANONYMOUS, roles: [] };
  const { bearer, share } = presented;
  if (bearer && isGrantHolderToken(bearer)) {
    const principal = await grantPrincipalFor(env, app, bearer);
    if (principal) viewer.grant = { holderId: principal.grantId, role: principal.role };
    else viewer.rejected = true;
  } else if (bearer !== undefined) {
    const held = bearer === null ? null : await appSessionAccess(env, await sessionKeys(), app, bearer);
    if (held) {
      viewer.kind = held.access.kind;
      viewer.roles = held.access.kind === "member" ? held.access.roles : [];
      viewer.humanId = held.claims.humanId;
    } else {
      viewer.rejected = true;
    }
  }
  if (share !== undefined && app.visibility === "link") {
    if (await shareTokenMatches(share.trim(), app.shareTokenHash)) viewer.share = true;
    else viewer.rejected = true;
  } else if (share !== undefined && app.visibility === "private" && isPreviewToken(share.trim())) {
    // A preview token (src/apps/preview.ts) opens a private app to an anonymous viewer.
    if (await previewTokenValid(env, app.id, share.trim())) viewer.share = true;
    else viewer.rejected = true;
  }
  return viewer;
}
