/**
 * `/authorize?app=<slug>&return=<url>` (WIRE §2.12, §4.4): the hand-off that signs a
 * person into an app's own origin, which has no cookies and cannot see the relay's
 * session. Signed out, the person signs in first and comes back here. Signed in with
 * access, the relay mints a one-time grant (single use, two minutes) and redirects to
 * `return` — only if it is on that app's own origin, else the app root — with the grant
 * in the `#svc_grant=` fragment, which the page trades at `POST /_svc/session` for an
 * app session. Without access: a public app just goes back (the visitor stays
 * anonymous); a private or link app gets a page saying access is missing.
 */
import { config } from "../../config";
import { findAppBySlug, type AppRow } from "../../db/apps";
import { appUrl } from "../../apps/urls";
import { RelayError } from "../../errors";
import { appAccessFor } from "../../auth/app-access";
import { mintGrant } from "../../db/sign-in-grants";
import type { AppContext } from "../types";
import { currentHuman, renderPage, toSignIn } from "./page";
import type { PageRoute } from "./routes";

const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** `value` when it is an absolute URL on the app's own origin (fragment dropped), else the app root. */
export function appReturnUrl(value: string | undefined, root: string): string {
  if (!value || value.length > 2000 || /[\u0000-\u001f\u007f\\]/.test(value)) return root;
  try {
    const url = new URL(value);
    if (url.origin !== new URL(root).origin || url.username || url.password) return root;
    url.hash = "";
    return url.href;
  } catch {
    return root;
  }
}

function noStoreRedirect(c: AppContext, location: string): Response {
  const res = c.redirect(location, 302);
  res.headers.set("Cache-Control", "no-store");
  res.headers.set("Referrer-Policy", "no-referrer");
  return res;
}

async function authorize(c: AppContext): Promise<Response> {
  const slug = (c.req.query("app") ?? "").trim().toLowerCase();
  if (!SLUG.test(slug)) {
    throw new RelayError("invalid_request", "This sign-in link does not name an app (it needs ?app=<slug>).", { field: "app" });
  }
  const human = await currentHuman(c);
  if (!human) {
    const here = new URL(c.req.url);
    return toSignIn(c, here.pathname + here.search);
  }
  const app: AppRow | undefined = await findAppBySlug(c.env, slug);
  if (!app || app.status === "deleted" || app.currentVersion === null) {
    throw new RelayError("app_not_found", `There is no app "${slug}".`, { app: slug });
  }
  if (app.status === "suspended") {
    throw new RelayError("forbidden", "This app is suspended by the relay's operator, so nobody can sign in to it.", { reason: "suspended" });
  }
  const root = appUrl(config(c.env), app.slug);
  const target = appReturnUrl(c.req.query("return"), root);
  const access = await appAccessFor(c.env, app, human.humanId);
  if (access) {
    const grant = await mintGrant(c.env, app.id, human.humanId);
    return noStoreRedirect(c, `${target}#svc_grant=${grant}`);
  }
  if (app.visibility === "public") return noStoreRedirect(c, target);
  return renderPage(c, 403, "No access to this app", (
    <div class="error" role="alert" id="error" data-error-code="forbidden">
      <p>You are signed in as <strong>{human.email}</strong>, and this account has no access to the app <strong>{app.slug}</strong>.</p>
      <p>Ask the app's owner to invite this address, or sign in with the account that owns it.</p>
    </div>
  ));
}

export function authorizePages(route: PageRoute): void {
  route("get", "/authorize", authorize);
}
