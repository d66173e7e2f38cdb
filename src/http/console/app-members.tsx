/**
 * One owned app's people and access, in the console (`/console/apps/:id/members`). It
 * lists the owner and members and offers plain forms: add by email (a member at once, or
 * a mailed invitation), set a member's custom roles (checkboxes of the manifest's roles;
 * none clears), remove a member, and withdraw a pending invitation. Every form goes
 * through the same functions as /v1/apps/:id/members, is same-origin checked by `page`,
 * and redirects back with a flash message; a refused form re-renders the page with the
 * reason and the refusal's status. The same page carries the app's grant links and
 * service credentials (`app-access-view.tsx`; their forms are in `app-access.tsx`).
 */
import * as z from "zod";
import { config } from "../../config";
import { RelayError } from "../../errors";
import { findAppForOwner, type AppRow } from "../../db/apps";
import { cancelInvite, pendingInvites } from "../../db/members";
import { addByEmail, liveManifest, membersOf, removeAppMember, setAppMemberRoles, type MemberView } from "../../apps/members";
import { appUrl } from "../../apps/urls";
import { normaliseEmail } from "../../db/humans";
import { listCredentials } from "../../db/credentials";
import { listGrantLinks } from "../../db/grant-links";
import { credentialView } from "../../apps/credentials";
import { grantView } from "../../apps/grant-links";
import type { AppContext, HumanCaller } from "../types";
import { hitAddressLimit } from "../middleware/rate-limit";
import { AccessSections, type AccessProblem } from "./app-access-view";
import { Alert, Flash, When } from "./layout";
import { appPath, membersPath, openHref } from "./owner-app";
import { currentHuman, lookup, readForm, renderPage, seeOther, toSignIn } from "./page";
import type { PageRoute } from "./routes";

const emailSchema = z.email().max(254);

export async function myApp(c: AppContext, human: HumanCaller): Promise<AppRow> {
  const id = c.req.param("id")!;
  const app = await findAppForOwner(c.env, human.humanId, id);
  if (!app || app.status === "deleted") throw new RelayError("app_not_found", `No app "${id.slice(0, 100)}" is yours.`, { app: id.slice(0, 100) });
  return app;
}

export function Roles({ roles }: { roles: string[] }) {
  return roles.length ? <>{roles.map((r) => <><code>{r}</code> </>)}</> : <span class="muted">none</span>;
}

function RoleBoxes({ declared, held, idPrefix }: { declared: string[]; held: string[]; idPrefix: string }) {
  if (!declared.length) return <p class="muted">This app declares no custom roles.</p>;
  return (
    <fieldset>
      <legend>Custom roles</legend>
      {declared.map((role) => (
        <span>
          <input type="checkbox" name="role" value={role} id={`${idPrefix}-${role}`} checked={held.includes(role)} />{" "}
          <label for={`${idPrefix}-${role}`} style="display:inline;font-weight:normal">{role}</label>{" "}
        </span>
      ))}
    </fieldset>
  );
}

function MemberRow({ app, member, declared }: { app: AppRow; member: MemberView; declared: string[] }) {
  const base = `/console/apps/${encodeURIComponent(app.id)}/members/${encodeURIComponent(member.humanId)}`;
  return (
    <tr data-human-id={member.humanId} data-role={member.role}>
      <th scope="row">{member.email}</th>
      <td data-field="role">{member.role}</td>
      <td data-field="custom-roles"><Roles roles={member.customRoles} /></td>
      <td><When iso={member.createdAt} /></td>
      <td>
        {member.role === "owner" ? <span class="muted">The owner always has full access.</span> : (
          <>
            {declared.length ? (
              <form method="post" action={`${base}/roles`}>
                <RoleBoxes declared={declared} held={member.customRoles} idPrefix={`roles-${member.humanId}`} />
                <button type="submit" data-action="set-roles">Save roles<span class="vh"> of {member.email}</span></button>
              </form>
            ) : null}
            <form method="post" action={`${base}/remove`}>
              <button type="submit" class="danger" data-action="remove">Remove<span class="vh"> {member.email}</span></button>
            </form>
          </>
        )}
      </td>
    </tr>
  );
}

const flashes: Record<string, (subject: string) => string> = {
  added: (who) => `${who} is now a member.`,
  invited: (who) => `Invitation mailed to ${who}. It works once, for 7 days.`,
  roles: (who) => `Saved the roles of ${who}.`,
  removed: () => "Removed the member. Their app sessions stop working at once.",
  cancelled: () => "Withdrew the invitation.",
  "grant-revoked": () => "Revoked the grant link. Everyone it let in is refused from their next request.",
  "credential-paused": () => "Paused the service credential. Its token is refused until you resume it.",
  "credential-resumed": () => "Resumed the service credential.",
  "credential-revoked": () => "Revoked the service credential for good.",
};

export async function appPage(
  c: AppContext, app: AppRow, status = 200, error: string | null = null, email = "", access: AccessProblem | null = null,
): Promise<Response> {
  const [members, invites, manifest, grants, credentials] = await Promise.all([
    membersOf(c.env, app), pendingInvites(c.env, app.id), liveManifest(c.env, app), listGrantLinks(c.env, app.id), listCredentials(c.env, app.id),
  ]);
  const declared = manifest ? Object.keys(manifest.roles) : [];
  const now = Date.now();
  const accessData = {
    grants: grants.map((g) => grantView(g, now)), credentials: credentials.map((r) => credentialView(r, now)),
    roles: declared, collections: manifest ? Object.keys(manifest.collections) : [],
  };
  const flashKind = c.req.query("flash");
  const subject = c.req.query("who") ?? "";
  // The flash names only someone actually on the page (never arbitrary text from the URL).
  const known = members.some((m) => m.email === subject) || invites.some((i) => i.email === subject) ? subject : "the person";
  const flash = lookup(flashes, flashKind);
  const base = `/console/apps/${encodeURIComponent(app.id)}`;
  return renderPage(c, status, `Members of ${app.slug}`, (
    <>
      <Flash text={flash ? flash(known) : null} />
      <p><a href={openHref(app)} id="open-app">Open the app</a> · <code>{appUrl(config(c.env), app.slug)}</code> · <a href={appPath(app)} id="back-to-app">Back to {app.slug}</a></p>
      <section aria-labelledby="members-heading">
        <h2 id="members-heading">People on this app</h2>
        <table id="members">
          <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Custom roles</th><th scope="col">Since</th><th scope="col">Actions</th></tr></thead>
          <tbody>{members.map((m) => <MemberRow app={app} member={m} declared={declared} />)}</tbody>
        </table>
      </section>
      {invites.length ? (
        <section aria-labelledby="invites-heading">
          <h2 id="invites-heading">Pending invitations</h2>
          <table id="invites">
            <thead><tr><th scope="col">Email</th><th scope="col">Custom roles</th><th scope="col">Expires</th><th scope="col">Actions</th></tr></thead>
            <tbody>{invites.map((i) => (
              <tr data-email={i.email}>
                <th scope="row">{i.email}</th>
                <td><Roles roles={JSON.parse(i.customRoles) as string[]} /></td>
                <td><When iso={i.expiresAt} /></td>
                <td>
                  <form method="post" action={`${base}/invites/cancel`}>
                    <input type="hidden" name="email" value={i.email} />
                    <button type="submit" data-action="cancel-invite">Withdraw<span class="vh"> the invitation of {i.email}</span></button>
                  </form>
                </td>
              </tr>
            ))}</tbody>
          </table>
        </section>
      ) : null}
      <section aria-labelledby="add-heading">
        <h2 id="add-heading">Add someone</h2>
        <Alert text={error} />
        <p>Someone with an account here becomes a member at once; anyone else gets an invitation by email.</p>
        <form method="post" action={`${base}/members`}>
          <div class="field">
            <label for="member-email">Email address</label>
            <input type="email" id="member-email" name="email" value={email} required maxlength={254} autocomplete="off"
              aria-describedby={error ? "form-error" : undefined} />
          </div>
          {declared.length ? <RoleBoxes declared={declared} held={[]} idPrefix="add-role" /> : null}
          <button type="submit" class="primary" id="add-member">Add</button>
        </form>
      </section>
      <AccessSections app={app} data={accessData} problem={access} />
    </>
  ));
}

async function showApp(c: AppContext): Promise<Response> {
  const human = await currentHuman(c);
  if (!human) return toSignIn(c, new URL(c.req.url).pathname);
  return appPage(c, await myApp(c, human));
}

/**
 * A refusal the person can fix on the page itself (bad address, undeclared role, no mail,
 * too many invitations for now) re-renders it, with the refusal's own headers (Retry-After).
 */
function formError(err: unknown): err is RelayError {
  return err instanceof RelayError && ["invalid_request", "conflict", "auth_provider_unavailable", "not_found", "rate_limited"].includes(err.code);
}

async function refusedPage(c: AppContext, app: AppRow, err: RelayError, email = ""): Promise<Response> {
  const res = await appPage(c, app, err.status, err.message, email);
  for (const [name, value] of Object.entries(err.headers ?? {})) res.headers.set(name, value);
  return res;
}

async function addMemberForm(c: AppContext): Promise<Response> {
  const human = await currentHuman(c);
  if (!human) return toSignIn(c, "/console/apps");
  const app = await myApp(c, human);
  const form = await readForm(c);
  const email = (form.get("email") ?? "").trim();
  if (!emailSchema.safeParse(email).success) return appPage(c, app, 400, "Enter a valid email address, like name@example.com.", email);
  try {
    // The same per-address bucket as POST /v1/apps/:id/members; addByEmail applies the daily mail cap.
    await hitAddressLimit(c, "invite");
    const result = await addByEmail(c.env, app, { email, roles: form.getAll("role"), actor: { humanId: human.humanId, agentId: null } },
      (p) => c.executionCtx.waitUntil(p));
    const who = encodeURIComponent(normaliseEmail(email));
    return seeOther(c, `${membersPath(app)}?flash=${result.kind === "invited" ? "invited" : "added"}&who=${who}`);
  } catch (err) {
    if (formError(err)) return refusedPage(c, app, err, email);
    throw err;
  }
}

async function setRolesForm(c: AppContext): Promise<Response> {
  const human = await currentHuman(c);
  if (!human) return toSignIn(c, "/console/apps");
  const app = await myApp(c, human);
  const humanId = c.req.param("humanId")!;
  const form = await readForm(c);
  try {
    // The same function as PATCH /v1/apps/:id/members/:humanId: it also asks the member's open sockets to reconnect.
    const member = await setAppMemberRoles(c.env, app, humanId, form.getAll("role"));
    return seeOther(c, `${membersPath(app)}?flash=roles&who=${encodeURIComponent(member.email)}`);
  } catch (err) {
    if (formError(err)) return appPage(c, app, err.status, err.message);
    throw err;
  }
}

async function removeForm(c: AppContext): Promise<Response> {
  const human = await currentHuman(c);
  if (!human) return toSignIn(c, "/console/apps");
  const app = await myApp(c, human);
  try {
    // The same function as DELETE /v1/apps/:id/members/:humanId: it also closes the person's open sockets.
    await removeAppMember(c.env, app, c.req.param("humanId")!);
    return seeOther(c, `${membersPath(app)}?flash=removed`);
  } catch (err) {
    if (formError(err)) return appPage(c, app, err.status, err.message);
    throw err;
  }
}

async function cancelInviteForm(c: AppContext): Promise<Response> {
  const human = await currentHuman(c);
  if (!human) return toSignIn(c, "/console/apps");
  const app = await myApp(c, human);
  const form = await readForm(c);
  await cancelInvite(c.env, app.id, normaliseEmail(form.get("email") ?? ""));
  return seeOther(c, `${membersPath(app)}?flash=cancelled`);
}

export function appMembersPages(route: PageRoute): void {
  route("get", "/console/apps/:id/members", showApp);
  route("post", "/console/apps/:id/members", addMemberForm);
  route("post", "/console/apps/:id/members/:humanId/roles", setRolesForm);
  route("post", "/console/apps/:id/members/:humanId/remove", removeForm);
  route("post", "/console/apps/:id/invites/cancel", cancelInviteForm);
}
