/**
 * Who is looking at an app, from the credentials a request carries in headers (app
 * origins have no cookies): an app-session token as `Authorization: Bearer`, and on a
 * link app the share token as `x-service-share`, checked against the app's CURRENT hash
 * so a rotated link stops at once. A grant-link holder credential (`Authorization: Bearer
 * grh_…`, from `POST /_svc/grant`) makes an anonymous viewer that carries the link's role
 * and opens private and link apps: the link is the invitation. A presented credential
 * that does not hold is reported as `rejected`, so callers can answer 401 instead of
 * silently serving less.
 */
import { config } from "../../config";
import { shareTokenMatches } from "../../apps/share";
import { isPreviewToken, previewTokenValid } from "../../apps/preview";
import { grantPrincipalFor, isGrantHolderToken } from "../../apps/grant-links";
import { appAccessFor, type AppAccessKind } from "./access";
import { ServeRefusal, type ServeContext, type ServedApp } from "./context";
import { signingKeys, verifyAppSession } from "./tokens";

export const SHARE_HEADER = "x-service-share";

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

export function unconfigured(): ServeRefusal {
  return new ServeRefusal("unconfigured",
    "Signing in to apps is not set up on this relay yet: the operator must set the APP_SESSION_SECRET secret. Private and link apps cannot be opened until then.");
}

/** Keys for signing app credentials, or the 503 refusal when the relay has no secret. */
export function requireKeys(env: object) {
  const keys = signingKeys(env);
  if (!keys) throw unconfigured();
  return keys;
}

function bearerOf(header: string | undefined): string | null | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}

export async function viewerOf(c: ServeContext, served: ServedApp): Promise<Viewer> {
  const viewer: Viewer = { ...ANONYMOUS, roles: [] };
  const bearer = bearerOf(c.req.header("authorization"));
  if (bearer && isGrantHolderToken(bearer)) {
    const principal = await grantPrincipalFor(c.env, served.app, bearer);
    if (principal) viewer.grant = { holderId: principal.grantId, role: principal.role };
    else viewer.rejected = true;
  } else if (bearer !== undefined) {
    const claims = bearer === null ? null : await verifyAppSession(await requireKeys(c.env), bearer, served.app.id);
    const access = claims ? await appAccessFor(c.env, served.app, claims.humanId, { sessionIssuedAtMs: claims.issuedAtMs }) : null;
    if (claims && access) {
      viewer.kind = access.kind;
      viewer.roles = access.kind === "member" ? access.roles : [];
      viewer.humanId = claims.humanId;
    } else {
      viewer.rejected = true;
    }
  }
  const share = c.req.header(SHARE_HEADER);
  if (share !== undefined && served.app.visibility === "link") {
    if (await shareTokenMatches(share.trim(), served.app.shareTokenHash)) viewer.share = true;
    else viewer.rejected = true;
  } else if (share !== undefined && served.app.visibility === "private" && isPreviewToken(share.trim())) {
    // A preview token (src/apps/preview.ts) opens a private app to an anonymous viewer.
    if (await previewTokenValid(c.env, served.app.id, share.trim())) viewer.share = true;
    else viewer.rejected = true;
  }
  return viewer;
}

/** Whether this viewer may see the app's document and assets. */
export function canOpen(served: ServedApp, viewer: Viewer): boolean {
  if (served.app.visibility === "public") return true;
  if (viewer.kind !== "anonymous") return true;
  // A grant-link holder: the link is the invitation, on private and link apps alike.
  if (viewer.grant) return true;
  // Set only by a link app's current share token or a private app's live preview token.
  return viewer.share;
}

/** The viewer's app session needs the secret; a relay without it cannot open gated apps. */
export function assertGatedServable(served: ServedApp, env: object): void {
  if (served.app.visibility !== "public" && !config(env).appSessionSecret) throw unconfigured();
}
