/**
 * Who is looking at an app (its document and assets), as far as serving goes: the
 * credentials are read from the request's headers here and resolved to a Viewer by
 * src/auth/page-viewer.ts; what that viewer may open (`canOpen`) and the 503 a relay
 * without APP_SESSION_SECRET answers for gated apps are decided here.
 */
import { config } from "../../config";
import { bearerOf } from "../../auth/bearer";
import { resolveViewer, type Viewer } from "../../auth/page-viewer";
import { signingKeys } from "../../auth/signing-keys";
import { ServeRefusal, type ServeContext, type ServedApp } from "./context";

export const SHARE_HEADER = "x-service-share";

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

export function viewerOf(c: ServeContext, served: ServedApp): Promise<Viewer> {
  return resolveViewer(c.env, served.app, { bearer: bearerOf(c.req.header("authorization")), share: c.req.header(SHARE_HEADER) }, () => requireKeys(c.env));
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
