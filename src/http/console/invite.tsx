/**
 * Accepting an app invitation: the mailed link opens `/invite?token=…`. Signed out, the
 * page offers to mail a sign-in link to the invited address and come back here. Signed
 * in as the invited address, it asks to accept (a form: opening a link never changes
 * anything, so mail scanners that prefetch links accept nothing); accepting makes the
 * person a member and takes them straight into the app, signed in (through `/authorize`,
 * which ends on the app's own origin). Signed in as someone else, it says so and changes
 * nothing. A spent, replaced or expired invitation is 410.
 */
import { config } from "../../config";
import { normaliseEmail } from "../../db/humans";
import { acceptInvitation, describeInvite } from "../../apps/members";
import { appUrl } from "../../apps/urls";
import type { AppContext } from "../types";
import { When } from "./layout";
import { openHref } from "./owner-app";
import { currentHuman, linkToken, pageCsp, readForm, renderPage, seeOther, SignInAs } from "./page";
import type { PageRoute } from "./routes";

async function showInvite(c: AppContext): Promise<Response> {
  const token = linkToken(c.req.query("token"), "invitation");
  const invite = await describeInvite(c.env, token);
  const human = await currentHuman(c);
  const here = `/invite?token=${encodeURIComponent(token)}`;
  const title = `Join ${invite.appName}`;
  if (!human) {
    return renderPage(c, 200, title, (
      <>
        <p id="invite-summary">You are invited to use <strong>{invite.appName}</strong> as <strong>{invite.email}</strong>.
          The invitation expires at <When iso={invite.expiresAt} />.</p>
        <p>First sign in with that address: we email it a sign-in link that brings you back here.</p>
        <SignInAs id="invite-sign-in" email={invite.email} returnTo={here} label={`Email ${invite.email} a sign-in link`} />
      </>
    ));
  }
  if (normaliseEmail(human.email) !== invite.email) {
    return renderPage(c, 403, title, (
      <>
        <div class="error" role="alert" id="error" data-error-code="forbidden">
          <p>This invitation is for <strong>{invite.email}</strong>, and you are signed in as <strong>{human.email}</strong>.</p>
          <p>Only the invited address can accept it.</p>
        </div>
        <SignInAs id="invite-sign-in" email={invite.email} returnTo={here} label={`Sign in as ${invite.email} instead`} />
      </>
    ));
  }
  // The accept form's redirects end on the app's own origin, which `form-action` must allow.
  const appOrigin = new URL(appUrl(config(c.env), invite.app.slug)).origin;
  return renderPage(c, 200, title, (
    <>
      <p id="invite-summary">You are invited to use <strong>{invite.appName}</strong> as <strong>{invite.email}</strong>.</p>
      <form method="post" action="/invite">
        <input type="hidden" name="token" value={token} />
        <button type="submit" class="primary" id="accept-invite">Accept and open the app</button>
      </form>
    </>
  ), { "Content-Security-Policy": pageCsp([appOrigin]) });
}

async function accept(c: AppContext): Promise<Response> {
  const form = await readForm(c);
  const token = linkToken(form.get("token"), "invitation");
  const human = await currentHuman(c);
  if (!human) return seeOther(c, `/invite?token=${encodeURIComponent(token)}`);
  const { app } = await acceptInvitation(c.env, token, { humanId: human.humanId, email: human.email });
  // /authorize signs the new member in to the app's own origin and lands there.
  return seeOther(c, openHref(app));
}

export function invitePages(route: PageRoute): void {
  route("get", "/invite", showInvite);
  route("post", "/invite", accept);
}
