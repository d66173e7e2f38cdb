/**
 * Confirming an account deletion: the mailed link opens `/account/delete?token=…`, a
 * page that says what will go and asks for a form post (opening the link deletes
 * nothing, so mail scanners that prefetch links cannot delete an account). The link
 * itself is the proof: it went to the account's address, like a sign-in link. Posting
 * deletes the account (src/account/deletion.ts), clears this browser's session cookie
 * and shows a goodbye page. A spent, replaced or expired link is a 410 page.
 */
import { deleteCookie } from "hono/cookie";
import { confirmDeletion, describeDeletion } from "../../account/deletion";
import { SESSION_COOKIE } from "../../auth/human-session";
import type { AppContext } from "../types";
import { linkToken, readForm, renderPage } from "./page";
import type { PageRoute } from "./routes";

async function showConfirm(c: AppContext): Promise<Response> {
  const token = linkToken(c.req.query("token"), "confirmation");
  const human = await describeDeletion(c.env, token);
  return renderPage(c, 200, "Delete your account", (
    <>
      <p id="deletion-summary">This deletes the account <strong>{human.email}</strong>. It cannot be undone.</p>
      <ul>
        <li>Every app you own goes to the trash and is purged after 30 days; nobody can restore it.</li>
        <li>Every key of your agents is revoked.</li>
        <li>You leave other people's apps and your organizations.</li>
        <li>You are signed out everywhere.</li>
      </ul>
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
  deleteCookie(c, SESSION_COOKIE, { path: "/" });
  return renderPage(c, 200, "Account deleted", (
    <p id="deleted" data-trashed-apps={String(done.trashedApps.length)}>The account {done.email} is deleted and you are signed out.
      {done.trashedApps.length ? ` ${done.trashedApps.length} app(s) went to the trash.` : ""}</p>
  ));
}

export function accountDeletePages(route: PageRoute): void {
  route("get", "/account/delete", showConfirm);
  route("post", "/account/delete", confirm);
}
