/**
 * Accepting an app invitation: the mailed link opens `/invite?token=…`. Signed out, the
 * page offers to mail a sign-in link to the invited address and come back here. Signed
 * in as the invited address, it asks to accept (a form: opening a link never changes
 * anything, so mail scanners that prefetch links accept nothing); accepting makes the
 * person a member and leads them (a link through `/authorize`) into the app. Signed in as someone
 * else, it says so and changes nothing. A spent, replaced or expired invitation is 410.
 */
import { RelayError } from "../../errors";
import { normaliseEmail } from "../../db/humans";
import { acceptInvitation, describeInvite } from "../../apps/members";
import type { AppContext } from "../types";
import { When } from "./layout";
import { currentHuman, readForm, renderPage, seeOther } from "./page";
import type { PageRoute } from "./routes";

function tokenOf(value: string | null | undefined): string {
  const token = (value ?? "").trim();
  if (!token || token.length > 200) throw new RelayError("invalid_request", "This invitation link is incomplete: it needs ?token=….", { field: "token" });
  return token;
}

function SignInAs({ email, returnTo, label }: { email: string; returnTo: string; label: string }) {
  return (
    <form method="post" action="/signin">
      <input type="hidden" name="email" value={email} />
      <input type="hidden" name="return_to" value={returnTo} />
      <button type="submit" class="primary" id="invite-sign-in">{label}</button>
    </form>
  );
}

async function showInvite(c: AppContext): Promise<Response> {
  const token = tokenOf(c.req.query("token"));
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
        <SignInAs email={invite.email} returnTo={here} label={`Email ${invite.email} a sign-in link`} />
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
        <SignInAs email={invite.email} returnTo={here} label={`Sign in as ${invite.email} instead`} />
      </>
    ));
  }
  return renderPage(c, 200, title, (
    <>
      <p id="invite-summary">You are invited to use <strong>{invite.appName}</strong> as <strong>{invite.email}</strong>.</p>
      <form method="post" action="/invite">
        <input type="hidden" name="token" value={token} />
        <button type="submit" class="primary" id="accept-invite">Accept and open the app</button>
      </form>
    </>
  ));
}

async function accept(c: AppContext): Promise<Response> {
  const form = await readForm(c);
  const token = tokenOf(form.get("token"));
  const human = await currentHuman(c);
  if (!human) return seeOther(c, `/invite?token=${encodeURIComponent(token)}`);
  const { app } = await acceptInvitation(c.env, token, { humanId: human.humanId, email: human.email });
  // Not straight to /authorize: the console's `form-action 'self'` also governs where a
  // form's redirects may lead, and /authorize ends on the app's own origin. The next page
  // links there instead.
  return seeOther(c, `/console/apps?flash=joined&app=${encodeURIComponent(app.id)}`);
}

export function invitePages(route: PageRoute): void {
  route("get", "/invite", showInvite);
  route("post", "/invite", accept);
}
