/**
 * Accepting an ownership transfer: the mailed link opens `/transfer?token=…`. Signed
 * out, the page offers to mail a sign-in link to the offered address and come back here.
 * Signed in as that address, it shows what is offered and asks to accept with a form
 * (opening a link never changes anything, so mail scanners that prefetch links accept
 * nothing); accepting moves the app and lands on its page in the console. Signed in as
 * someone else, it says so and changes nothing. A spent, withdrawn or expired offer is
 * a 410 page.
 */
import { normaliseEmail } from "../../db/humans";
import { acceptTransfer, describeTransfer } from "../../account/transfers";
import type { AppContext } from "../types";
import { When } from "./layout";
import { currentHuman, linkToken, readForm, renderPage, seeOther, SignInAs } from "./page";
import type { PageRoute } from "./routes";

async function showOffer(c: AppContext): Promise<Response> {
  const token = linkToken(c.req.query("token"), "transfer");
  const offer = await describeTransfer(c.env, token);
  const human = await currentHuman(c);
  const here = `/transfer?token=${encodeURIComponent(token)}`;
  const title = `Take over ${offer.appName}`;
  const summary = (
    <p id="transfer-summary"><strong>{offer.fromEmail}</strong> offers to make <strong>{offer.toEmail}</strong> the owner
      of <strong>{offer.appName}</strong>. The offer expires at <When iso={offer.expiresAt} />.</p>
  );
  if (!human) {
    return renderPage(c, 200, title, (
      <>
        {summary}
        <p>First sign in with that address: we email it a sign-in link that brings you back here.</p>
        <SignInAs id="transfer-sign-in" email={offer.toEmail} returnTo={here} label={`Email ${offer.toEmail} a sign-in link`} />
      </>
    ));
  }
  if (normaliseEmail(human.email) !== offer.toEmail) {
    return renderPage(c, 403, title, (
      <>
        <div class="error" role="alert" id="error" data-error-code="forbidden">
          <p>This transfer is offered to <strong>{offer.toEmail}</strong>, and you are signed in as <strong>{human.email}</strong>.</p>
          <p>Only the offered address can accept it.</p>
        </div>
        <SignInAs id="transfer-sign-in" email={offer.toEmail} returnTo={here} label={`Sign in as ${offer.toEmail} instead`} />
      </>
    ));
  }
  return renderPage(c, 200, title, (
    <>
      {summary}
      <p id="transfer-effects">Accepting makes the app yours: its data, members, grant links and agents' access follow the owner.
        {offer.keepAsMember ? ` ${offer.fromEmail} stays on the app as a member; you can remove them later.` : ` ${offer.fromEmail} will no longer have access.`}
        {" "}Your agents can manage it from now on; theirs no longer can. Its service credentials are revoked, so backends
        using them stop; mint new ones for the backends you want to keep.</p>
      <form method="post" action="/transfer">
        <input type="hidden" name="token" value={token} />
        <button type="submit" class="primary" id="accept-transfer">Accept and become the owner</button>
      </form>
    </>
  ));
}

async function accept(c: AppContext): Promise<Response> {
  const form = await readForm(c);
  const token = linkToken(form.get("token"), "transfer");
  const human = await currentHuman(c);
  if (!human) return seeOther(c, `/transfer?token=${encodeURIComponent(token)}`);
  const { app } = await acceptTransfer(c.env, token, { humanId: human.humanId, email: human.email }, (p) => c.executionCtx.waitUntil(p));
  return seeOther(c, `/console/apps/${encodeURIComponent(app.id)}`);
}

export function transferPages(route: PageRoute): void {
  route("get", "/transfer", showOffer);
  route("post", "/transfer", accept);
}
