/**
 * Sign-in pages: a person types an email address, the relay mails a single-use link
 * (sendMagicLink, the same path as POST /v1/auth/request-link) and the "check your mail"
 * page says what happens next. `return_to` rides along so a person sent here from
 * /device lands back there once the link sets the session cookie. When the operator
 * configured an identity provider, a "Sign in with <name>" button comes first.
 */
import * as z from "zod";
import { config } from "../../config";
import { rateLimit } from "../middleware/rate-limit";
import { safeReturnTo, sendMagicLink } from "../v1/human-auth";
import type { AppContext } from "../types";
import { Alert, Flash } from "./layout";
import { currentHuman, lookup, readForm, renderPage, seeOther } from "./page";
import type { PageRoute } from "./routes";

const emailSchema = z.email().max(254);

const errors: Record<string, string> = {
  link_invalid: "That sign-in link cannot be used: links work once, for 15 minutes. Ask for a new one below.",
  // The identity provider's way back (src/http/v1/idp-auth.ts): each a catalogue code.
  idp_state_invalid: "That sign-in did not start in this browser, took longer than ten minutes, or was already used. Start again below. (idp_state_invalid)",
  idp_access_denied: "The sign-in was declined at the identity provider. Try again, or use an emailed link. (idp_access_denied)",
  idp_token_invalid: "The identity provider's answer could not be trusted, so you are not signed in. Try again, or use an emailed link. (idp_token_invalid)",
  email_not_verified: "The identity provider did not confirm your email address. Use an emailed link instead. (email_not_verified)",
  auth_provider_unavailable: "The identity provider is not available right now. Use an emailed link instead. (auth_provider_unavailable)",
};

const flashes: Record<string, string> = {
  signed_out: "You are signed out.",
};

function returnToOf(c: AppContext, value: string | null | undefined): string | null {
  return safeReturnTo(value, config(c.env).apiOrigin);
}

/** "Sign in with <name>" when the operator configured an identity provider (GET /v1/auth/idp). */
function ProviderButton({ name, returnTo }: { name: string; returnTo: string | null }) {
  const href = returnTo ? `/v1/auth/idp?return_to=${encodeURIComponent(returnTo)}` : "/v1/auth/idp";
  return (
    <p><a class="button primary" id="idp-sign-in" href={href}>Sign in with {name}</a></p>
  );
}

function SignInForm({ c, returnTo, email, error }: { c: AppContext; returnTo: string | null; email: string; error: string | null }) {
  const provider = config(c.env).idp;
  return (
    <>
      <Alert text={error} />
      {provider ? <ProviderButton name={provider.name} returnTo={returnTo} /> : null}
      <p>{provider ? "Or we email you a link that signs you in." : "We email you a link that signs you in."} No password needed.</p>
      <form method="post" action="/signin">
        <div class="field">
          <label for="email">Email address</label>
          <input type="email" id="email" name="email" value={email} required autocomplete="email" maxlength={254}
            aria-describedby={error ? "form-error" : undefined} />
        </div>
        {returnTo ? <input type="hidden" name="return_to" value={returnTo} /> : null}
        <button type="submit" class="primary" id="send-link">Email me a sign-in link</button>
      </form>
    </>
  );
}

async function showSignIn(c: AppContext): Promise<Response> {
  const human = await currentHuman(c);
  const returnTo = returnToOf(c, c.req.query("return_to"));
  const sentTo = c.req.query("sent");

  if (sentTo !== undefined) {
    const email = emailSchema.safeParse(sentTo).success ? sentTo : null;
    const again = returnTo ? `/signin?return_to=${encodeURIComponent(returnTo)}` : "/signin";
    return renderPage(c, 200, "Check your mail", (
      <>
        <p role="status" id="check-mail">
          {email ? <>We sent a sign-in link to <strong>{email}</strong>.</> : "We sent you a sign-in link."}{" "}
          Open it on this device; it works once, for 15 minutes.
        </p>
        {config(c.env).development ? (
          <p class="note" id="dev-mail-note">
            Development mode: mail is not sent. Read it in the{" "}
            <a href={email ? `/__dev/mail?to=${encodeURIComponent(email)}` : "/__dev/mail"}>development outbox</a>.
          </p>
        ) : null}
        <p><a href={again}>Use a different address</a></p>
      </>
    ));
  }

  const error = lookup(errors, c.req.query("error"));
  return renderPage(c, 200, "Sign in", (
    <>
      <Flash text={lookup(flashes, c.req.query("flash"))} />
      {human ? (
        <p class="note">You are already signed in as <strong>{human.email}</strong>. <a href={returnTo ?? "/"}>Continue</a>, or sign in as someone else below.</p>
      ) : null}
      <SignInForm c={c} returnTo={returnTo} email="" error={error} />
    </>
  ));
}

async function requestLink(c: AppContext): Promise<Response> {
  await rateLimit("requestLink")(c, async () => {});
  const form = await readForm(c);
  const returnTo = returnToOf(c, form.get("return_to"));
  const email = (form.get("email") ?? "").trim();
  if (!emailSchema.safeParse(email).success) {
    return renderPage(c, 400, "Sign in", (
      <SignInForm c={c} returnTo={returnTo} email={email} error="Enter a valid email address, like name@example.com." />
    ));
  }
  await sendMagicLink(c, email, returnTo);
  const query = new URLSearchParams({ sent: email });
  if (returnTo) query.set("return_to", returnTo);
  return seeOther(c, `/signin?${query}`);
}

export function signInPages(route: PageRoute): void {
  route("get", "/signin", showSignIn);
  route("post", "/signin", requestLink);
}
