/**
 * Deleting an account from the console. Opened bare (from the account page), `/account/delete`
 * asks a signed-in person to have a confirmation link mailed to their address (the same
 * request as `DELETE /v1/self`), and asks a signed-out visitor to sign in first. The mailed
 * link opens `/account/delete?token=…`, a page that says what will go and asks for a form
 * post (opening the link deletes nothing, so mail scanners that prefetch links cannot
 * delete an account). The link itself is the proof: it went to the account's address,
 * like a sign-in link. Posting deletes the account (src/account/deletion.ts), clears this
 * browser's session cookie and shows a goodbye page. A spent, replaced or expired link is
 * a 410 page.
 */
import { confirmDeletion, DELETION_TTL_SECONDS, describeDeletion, requestDeletion } from "../../account/deletion";
import { TRASH_DAYS } from "../../apps/trash";
import { clearSessionCookie } from "../v1/human-auth";
import type { AppContext } from "../types";
import { When } from "./layout";
import { currentHuman, linkToken, readForm, renderPage, toSignIn } from "./page";
import type { PageRoute } from "./routes";

const HERE = "/account/delete";

function WhatGoes() {
  return (
    <ul id="deletion-consequences">
      <li>Every app you own goes to the trash and is purged after {TRASH_DAYS} days; nobody can restore it.</li>
      <li>Every key of your agents is revoked.</li>
      <li>You leave other people's apps and your organizations.</li>
      <li>You are signed out everywhere.</li>
    </ul>
  );
}

/** Opened without a link's token: signed in, offer to mail the confirmation link; signed out, sign in first. */
async function showStart(c: AppContext): Promise<Response> {
  const human = await currentHuman(c);
  if (!human) {
    return renderPage(c, 200, "Sign in to delete your account", (
      <>
        <p id="sign-in-prompt">To delete your account, first sign in with its email address. We then email that address a link to confirm.</p>
        <p><a href={`/signin?return_to=${encodeURIComponent(HERE)}`} class="button primary" id="sign-in-to-delete">Sign in</a></p>
      </>
    ));
  }
  return renderPage(c, 200, "Delete your account", (
    <>
      <p id="deletion-summary">Deleting the account <strong>{human.email}</strong> cannot be undone.</p>
      <WhatGoes />
      <p>To be sure it is you, we email {human.email} a link; nothing is deleted until you open it and confirm.</p>
      <form method="post" action={`${HERE}/request`}>
        <button type="submit" class="danger" id="request-deletion">Email me the confirmation link</button>
      </form>
      <p><a href="/console/account">Keep my account</a></p>
    </>
  ));
}

async function requestLink(c: AppContext): Promise<Response> {
  const human = await currentHuman(c);
  if (!human) return toSignIn(c, HERE);
  const asked = await requestDeletion(c.env, human.humanId);
  return renderPage(c, 200, "Check your mail", (
    <p role="status" id="deletion-mailed">We sent a confirmation link to <strong>{asked.email}</strong>. It works once, for{" "}
      {DELETION_TTL_SECONDS / 60} minutes (until <When iso={asked.expiresAt} />); open it to delete the account.</p>
  ));
}

async function showConfirm(c: AppContext): Promise<Response> {
  if (c.req.query("token") === undefined) return showStart(c);
  const token = linkToken(c.req.query("token"), "confirmation");
  const human = await describeDeletion(c.env, token);
  return renderPage(c, 200, "Delete your account", (
    <>
      <p id="deletion-summary">This deletes the account <strong>{human.email}</strong>. It cannot be undone.</p>
      <WhatGoes />
      <form method="post" action="/account/delete">
        <input type="hidden" name="token" value={token} />
        <button type="submit" class="danger" id="confirm-deletion">Delete my account</button>
      </form>
    </>
  ));
}

async function confirm(c: AppContext): Promise<Response> {
  const form = await readForm(c);
  const done = await confirmDeletion(c.env, linkToken(form.get("token"), "confirmation"));
  clearSessionCookie(c);
  return renderPage(c, 200, "Account deleted", (
    <p id="deleted" data-trashed-apps={String(done.trashedApps.length)}>The account {done.email} is deleted and you are signed out.
      {done.trashedApps.length ? ` ${done.trashedApps.length} app(s) went to the trash.` : ""}</p>
  ));
}

export function accountDeletePages(route: PageRoute): void {
  route("get", HERE, showConfirm);
  route("post", HERE, confirm);
  route("post", `${HERE}/request`, requestLink);
}
